/* SPDX-License-Identifier: GPL-2.0 */
/*
 * o2lnd: the LNet layer (module/lnet/): NIs (ni.c), sending and
 * receiving LNet messages with their credits and peer health (lnet.c),
 * ping and push (ping.c), LNet peers with several NIDs, discovery and
 * Multi-Rail selection (discovery.c), the selftest service
 * (selftest.c), routing (router.c), the ioctl views (views.c)
 * and the char device (ctl.c).  It calls the LND by name (lnd.h).
 */
#ifndef _O2LND_LNET_H
#define _O2LND_LNET_H

#include "lnd.h"
#include "health.h"

/* router.c */
struct o2_rtr_msg;
extern bool o2_forwarding;
int o2_rtr_init(void);
void o2_rtr_stop(void);
void o2_route_gw_heard(const struct o2_ping_view *v);
void o2_pings_stop(void);
int o2_rtr_peer_credits(void);
struct o2_ni *o2_route_ni(u64 nid, u64 *hop);
u64 o2_route_hop(struct o2_ni *ni, u64 nid, bool count);
bool o2_rtr_forward(struct o2_conn *conn, struct o2_rx *rx, void *payload,
		    u32 nob);
int o2_rtr_forward_put(struct o2_conn *conn, const struct o2_putreq_msg *m);
void o2_rtr_msg_done(struct o2_rtr_msg *m, int status);
void o2_rtr_conn_closed(struct o2_conn *conn);
void o2_rtr_expire(unsigned long now, bool all);
int o2_route_show(u32 index, struct o2lnd_ioc_route *out);
void o2_routing_show(struct o2lnd_ioc_routing *out);
void o2_rtr_peer_show(struct o2_peer *peer, struct o2lnd_ioc_peer *out);

int o2_bulk_launch(struct o2_ni *ni, u64 nid, struct o2_tx *tx,
		   struct o2_bulk *b);
int o2_lnet_bulk_req(struct o2_conn *conn, struct o2_rx *rx, u8 type,
		     void *body, u32 rd_nob);

/* selftest.c */
int o2_brw(u64 nid, u64 src_nid, u32 op, u32 size, u32 timeout_ms,
	   u32 flags, u64 seed, struct o2lnd_ioc_brw *out);
void o2_brw_fill(struct o2_bulk *b);
int o2_brw_get_src(struct o2_conn *conn, const struct o2_get_msg *m,
		   u32 rd_nob);
int o2_brw_put_sink(struct o2_conn *conn, const struct o2_putreq_msg *m);
int o2_brw_reply_put(struct o2_conn *conn, const struct o2_putreq_msg *m);
bool o2_brw_lnet_ack(u64 cookie, u64 from, u64 match_bits, u32 mlength);
bool o2_brw_rx_immediate(struct o2_conn *conn, const struct o2_lnet_hdr *hdr,
			 const void *payload);

/* lnet.c */
extern const struct o2_lnet_ops o2_lnet_ops;
int o2_ni_launch(struct o2_ni *ni, u64 nid, struct o2_tx *tx);
void o2_ni_credit_work(struct work_struct *work);
void o2_tx_credits_return(struct o2_tx *tx);
void o2_peer_health(struct o2_peer *peer, bool ok);
void o2_ni_expire_credit_waits(struct o2_ni *ni, unsigned long now);
void o2_ni_take_credit_waits(struct o2_ni *ni, unsigned long now, bool all,
			     struct list_head *out);
bool o2_lnet_recv(struct o2_conn *conn, struct o2_rx *rx, void *payload,
		  u32 nob);
void o2_lnet_drop(struct o2_conn *conn, const char *why);
struct o2_ni *o2_ni_for(u64 nid, u64 src_nid, int *rc);
struct o2_ni *o2_ni_answer(struct o2_ni *ni, u64 to);
void o2_lnet_hdr_init(struct o2_lnet_hdr *h, struct o2_ni *ni, u64 dst,
		      u32 type, u32 payload);

/* ping.c */
int o2_ping(u64 nid, u64 src_nid, bool any_rail, u32 timeout_ms,
	    struct o2lnd_ioc_ping *out);
bool o2_ping_finish(u64 cookie, u64 from, int status, const void *reply,
		    u32 len);
void o2_ping_get_rx(struct o2_conn *conn, const struct o2_lnet_hdr *hdr);
u32 o2_ping_info_fill(void *buf, u32 size);
int o2_push(u64 nid, u32 timeout_ms);
bool o2_push_acked(u64 cookie, u64 from);

/* discovery.c: LNet peers (several NIDs), discovery and push */
int o2_lpeer_learn(const struct o2_ping_view *v, bool push);
void o2_lpeer_health(u64 nid, bool ok);
void o2_health_note(struct o2_ni *ni, u64 nid, int status,
		    enum o2_tx_phase phase);
struct o2_ni *o2_lnet_select(u64 nid, u64 src_nid, u64 failed, u64 *dest,
			     int *rc);
bool o2_lpeer_same(u64 a, u64 b);
bool o2_lnet_answer_from(u64 target, u64 from, bool routed);
int o2_lpeer_show(u32 index, u64 nid, struct o2lnd_ioc_lpeer *out);
u32 o2_ping_seqno(void);
void o2_push_rx(struct o2_conn *conn, const struct o2_lnet_hdr *hdr,
		const void *payload, u32 plen);
int o2_discover(u64 nid, u32 timeout_ms, struct o2lnd_ioc_lpeer *out);
void o2_discover_on_send(u64 nid);
void o2_push_all(void);
void o2_health_recover(void);
void o2_lpeers_stop(void);
void o2_lpeers_free(void);

/* ni.c */
int o2_nis_start(const char *networks);
void o2_nis_stop(void);
void o2_nis_free(void);
int o2_ni_add(const char *net, const char *ifname, u64 *nid);
int o2_ni_del(const char *net, const char *ifname, u32 *count, u64 *nid);
struct o2_ni *o2_ni_by_index(u32 ni_index);

/* views.c */
void o2_ni_stats(struct o2_ni *ni, struct o2lnd_ioc_net *out);
int o2_peer_show(u32 ni_index, u32 index, struct o2lnd_ioc_peer *out);
int o2_conn_show(u32 ni_index, u32 index, struct o2lnd_ioc_conn *out);
int o2_peer_close(u64 nid, u64 local_nid, u32 *closed);

/* ctl.c */
int o2_ctl_init(void);
void o2_ctl_exit(void);

#endif /* _O2LND_LNET_H */
