/* SPDX-License-Identifier: GPL-2.0 */
/*
 * o2lnd: the LND layer (module/lnd/): RDMA devices and their MR pools,
 * connections (CM, state, connd), tx and rx, and the peer table both
 * layers share.  Its objects are defined here; it reaches LNet only
 * through o2_up (struct o2_lnet_ops, below) and a tx's done callback,
 * and never includes lnet.h (scripts/o2-layers.py checks both).
 */
#ifndef _O2LND_LND_H
#define _O2LND_LND_H

#include "o2lnd.h"

/* RC retry count of every connection (rdma_conn_param.retry_count) */
#define O2_CM_RETRY_COUNT	5

extern struct workqueue_struct *o2_connd_wq;
extern struct workqueue_struct *o2_tx_wq;
extern struct list_head o2_nis;

/*
 * Walk o2_nis without a lock: writers hold o2_nis_mutex (ni.c), an
 * NI is unlinked with list_del_rcu() and its struct is never freed before
 * unload, so a walker may stand on a deleted NI and walk on; it finds it
 * shut down.
 */
#define o2_for_each_ni(ni) list_for_each_entry_rcu(ni, &o2_nis, list, true)
extern int o2_nnis;
extern atomic_t o2_nconns;
extern atomic_t o2_npeers;
extern wait_queue_head_t o2_exit_waitq;

/**
 * struct o2_dev - an RDMA device in use
 * @list: in o2_devs
 * @ibdev: the device
 * @pd: protection domain shared by every conn on the device
 * @users: conns holding resources on the device
 * @dead: the device is being removed; no new users
 * @mr_lock: protects the MR pool (a leaf lock)
 * @mr_free: MRs ready for a registration
 * @mr_size: MRs allocated
 * @mr_used: MRs in use
 * @mr_max: pool limit (from the device's max_mr)
 * @mr_pages: pages one MR maps
 * @mr_recovered: MRs destroyed and replaced after a failed invalidation
 * @event_handler: port events (PORT_ERR, PORT_ACTIVE) of the device
 * @reg_replayed: the device may execute a local work request (REG_MR,
 *	LOCAL_INV) again when it retransmits the send queue (rdma_rxe: its
 *	retry restarts at the oldest unacknowledged WQE and executes the local
 *	operations after it a second time; a REG_MR of an MR that is valid
 *	by then fails, and that error leaves the QP silently stuck).  On such
 *	a device every registration is posted as LOCAL_INV + REG_MR of the
 *	same key, a pair that gives the same result when executed twice; the
 *	key is not bumped between uses (o2_bulk_map_on()).
 * @cqs: CQs made on the device so far: the next one's completion vector
 *	(o2_comp_vector_pick())
 */
struct o2_dev {
	struct list_head list;
	struct ib_device *ibdev;
	struct ib_pd *pd;
	atomic_t users;
	bool dead;
	spinlock_t mr_lock;	/* the MR pool */
	struct list_head mr_free;
	u32 mr_size;
	u32 mr_used;
	u32 mr_max;
	u32 mr_pages;
	atomic64_t mr_recovered;
	bool reg_replayed;
	struct ib_event_handler event_handler;
	atomic_t cqs;
};

/**
 * struct o2_mr - a fast-registration MR of a device's pool
 * @list: in dev->mr_free while free
 * @dev: its device
 * @mr: the MR
 */
struct o2_mr {
	struct list_head list;
	struct o2_dev *dev;
	struct ib_mr *mr;
};

/* kinds of bulk buffers (struct o2_bulk) */
enum o2_bulk_kind {
	O2_BULK_PUT_SRC,	/* our PUT's data: RDMA-written on PUT_ACK */
	O2_BULK_PUT_SINK,	/* a peer's PUT lands here */
	O2_BULK_GET_SINK,	/* our GET's REPLY lands here */
	O2_BULK_GET_SRC,	/* a peer's GET: RDMA-written with GET_DONE */
};

struct o2_page_set;

/**
 * struct o2_bulk - a bulk buffer and its exchange
 * @ref: references (the waiting table, txs carrying it, the owner)
 * @list: on a local list of exchanges being failed (o2_bulk_fail_waiting())
 * @waiting: in the table of pending requests (pending.c; its lock)
 * @kind: O2_BULK_*
 * @cookie: our cookie for it, its key in that table (room reserved)
 * @peer_cookie: the peer's cookie (PUT_REQ's or GET_REQ's)
 * @nob: payload bytes
 * @npages: pages
 * @pages: the pages (@pset's, when it has one)
 * @pset: the page set of the selftest pool the pages belong to, or NULL
 * @sgt: scatterlist of the pages
 * @nents: DMA-mapped entries, 0 while unmapped
 * @dev: the device it is mapped on (a user count), or NULL
 * @mr: its MR while registered
 * @reg_cqe: error completion of its REG_MR work request
 * @write_cqe: error completion of its RDMA WRITE work requests
 * @conn: the conn its exchange runs on (a reference), or NULL
 * @ni: the NI
 * @peer_nid: the LNet peer
 * @deadline: jiffies by which the exchange must end
 * @status: result
 * @seed: pattern seed
 * @flags: O2LND_BRW_F_*
 * @ack_wmd: PUT_SINK: the PUT's ack_wmd, echoed in the LNet ACK
 * @got: GET_SINK: the bytes the peer's GET_DONE says it wrote (a REPLY
 *	may be shorter than its sink)
 * @hop_nid: the peer on the wire (the next hop): only its messages may
 *	complete the exchange
 * @done: its owner's completion, or NULL: called once, when the
 *	exchange ends (o2_bulk_finish()) or, if it never did, by the last
 *	reference with -ECONNABORTED.  bulk.c never calls an owner by
 *	name: o2lnd's selftest and router, and Lustre's messages
 *	(module/lustre/), set their own.
 * @owner: the owner's context for @done
 */
struct o2_bulk {
	struct kref ref;
	struct list_head list;
	bool waiting;
	enum o2_bulk_kind kind;
	u64 cookie;
	u64 peer_cookie;
	u32 nob;
	u32 npages;
	struct page **pages;
	struct o2_page_set *pset;
	struct sg_table sgt;
	int nents;
	struct o2_dev *dev;
	struct o2_mr *mr;
	struct ib_cqe reg_cqe;
	struct ib_cqe write_cqe;
	struct o2_conn *conn;
	struct o2_ni *ni;
	u64 peer_nid;
	unsigned long deadline;
	int status;
	u64 seed;
	u32 flags;
	struct o2_lnet_wmd ack_wmd;
	u32 got;
	u64 hop_nid;
	void (*done)(struct o2_bulk *b, int status);
	void *owner;
};

/**
 * struct o2_bulk_owner - who a bulk exchange that bulk.c starts belongs to
 * @done: becomes o2_bulk.done
 * @ctx: becomes o2_bulk.owner
 * @cookie: if not 0, o2_bulk.peer_cookie (the owner's, e.g. its RPC's)
 * @seed: the sink's pattern seed (selftest)
 * @flags: O2LND_BRW_F_* (selftest)
 * @pooled: the sink's pages come from the selftest pool (selftest only:
 *	see o2_bulk_alloc())
 */
struct o2_bulk_owner {
	void (*done)(struct o2_bulk *b, int status);
	void *ctx;
	u64 cookie;
	u64 seed;
	u32 flags;
	bool pooled;
};

/**
 * struct o2_ni - a local network interface
 * @list: in o2_nis
 * @ref: references (module, peers)
 * @index: 0-based index for NET_SHOW
 * @nid: our NID
 * @net: network name ("o2ib0")
 * @ifname: netdev name
 * @devname: RDMA device name
 * @addr: IPv4 address (network order)
 * @mask: its subnet's mask (network order): o2_ni_toward() picks the NI
 *	whose subnet holds a peer's address
 * @stamp: incarnation (ktime_get_real_ns() at start)
 * @listen_id: listening cm_id, NULL once destroyed
 * @dev: the o2_dev of the device the listener is bound to, a users
 *	reference held while attached, NULL while detached (o2_nis_mutex)
 * @detached: its RDMA device went away; connd attaches the NI again
 *	(o2_nis_reattach()) once a device serves its interface
 * @lock: peer table, peers and their conn lists
 * @peers: peer table keyed by NID
 * @up: accepting connections and sending: attached, its link up, not
 *	shut down (READ_ONCE; written under o2_nis_mutex)
 * @link_down: its port is down (link lost): DOWN in our ping info and no
 *	sends until it is back (o2_nis_link_check(), o2_nis_mutex)
 * @shutdown: the NI is going (unload, NET_DEL) or not listening yet
 * @health: its LNet Health, 0..O2_HEALTH_MAX: lowered by failures blamed
 *	on it, raised by successes, 0 while detached (lnet/discovery.c)
 * @probe_at: while it is unhealthy, jiffies of its next recovery step
 *	(lnet/discovery.c, under its lock; set racily when health drops)
 * @tx_live: txs alive on this NI (bounded by o2_ntx; NOOPs not counted)
 * @tx_pool_lock: protects @tx_pool and @tx_pool_n (a leaf)
 * @tx_pool: released txs kept with their message buffers for reuse, so
 *	that a steady flow of messages allocates nothing (tx.c)
 * @tx_pool_n: txs in @tx_pool (at most o2_ntx)
 * @txcr: NI tx credits (ni->lock)
 * @credit_q: txs waiting for an NI tx credit (ni->lock)
 * @ready: txs that got their credits from a completing tx, sent by
 *	@credit_work (ni->lock)
 * @credit_work: sends @ready (so a completion never sends inline and a
 *	chain of failures never recurses)
 * @conns_lock: protects @conns
 * @conns: every conn of the NI from allocation to release, whatever its
 *	state (so zombies stay visible)
 * @stats: counters reported by NET_SHOW: one per O2LND_NI_COUNTERS entry,
 *	of the same name (ctl.c fills them by that list)
 */
struct o2_ni {
	struct list_head list;
	struct list_head retired;
	refcount_t ref;
	u64 nid;
	char net[O2LND_NAME_LEN];
	char ifname[IFNAMSIZ];
	char devname[O2LND_NAME_LEN];
	__be32 addr;
	__be32 mask;
	u64 stamp;
	struct rdma_cm_id *listen_id;
	struct o2_dev *dev;
	bool detached;
	spinlock_t lock;	/* peer table, peers, peer conn lists */
	DECLARE_HASHTABLE(peers, 6);
	bool up;
	bool link_down;
	bool shutdown;
	atomic_t health;
	unsigned long probe_at;
	atomic_t tx_live;
	spinlock_t tx_pool_lock;	/* tx_pool, tx_pool_n */
	struct list_head tx_pool;
	int tx_pool_n;
	struct o2_txcr txcr;
	struct list_head credit_q;
	struct list_head ready;
	struct work_struct credit_work;
	spinlock_t conns_lock;	/* conns */
	struct list_head conns;
	struct {
		atomic64_t send_count;
		atomic64_t recv_count;
		atomic64_t drop_count;
		atomic64_t send_bytes;
		atomic64_t recv_bytes;
		atomic64_t connects_active;
		atomic64_t connects_passive;
		atomic64_t rejects_sent;
		atomic64_t rejects_received;
		atomic64_t error_count;
		atomic64_t tx_timeouts;
		atomic64_t tx_no_credit_drops;
		atomic64_t keepalives;
		atomic64_t early_replies;
		atomic64_t rdma_bytes;
		atomic64_t bulk_errors;
		atomic64_t resend_count;
	} stats;
};

/**
 * struct o2_peer - a remote NID seen from one NI
 * @node: in ni->peers
 * @ref: references (table, conns, txs sent to it, connd's reconnect)
 * @ni: our NI
 * @nid: the peer's NID
 * @conns: its conns that are not closing (ni->lock)
 * @tx_queue: txs waiting for a connection (ni->lock)
 * @txcr: LNet peer tx credits (ni->lock)
 * @credit_q: txs waiting for a peer tx credit (ni->lock)
 * @rtrcr: its router buffer credits (o2_rtr_lock, router.c)
 * @rtr_q: its messages waiting for a router credit (o2_rtr_lock)
 * @rtr_probe_at: while it is down, when the router lets the next message
 *	to it through as a probe (ni->lock)
 * @ntx: txs of this peer alive, bounded by o2_credits (ni->lock)
 * @down: health: marked down after O2LND_PEER_DOWN_FAILURES failures in a
 *	row, up again on a success (ni->lock)
 * @failures: failures in a row (ni->lock)
 * @downs: times it was marked down (ni->lock)
 * @alive: jiffies when last heard from, 0 never (READ_ONCE/WRITE_ONCE)
 * @incarnation: last known incarnation of the peer, 0 if unknown
 * @cp: parameters for the next active connect (adopted from a reject)
 * @reconnect: a reconnect is scheduled at @reconnect_at
 * @reconnect_at: jiffies
 * @races: consecutive CONN_RACE rejects of our connects
 * @race_claimed: it rejected our last connect with CONN_RACE (cleared
 *	once a conn to it is established): its race rule says it wins
 * @retries: consecutive rejects of other retryable kinds
 * @addr_retries: consecutive address resolution timeouts
 * @in_table: still in ni->peers
 * @state: O2_PEER_*, kept by o2_peer_update_state()
 * @backoff_ms: current reconnect backoff after failed connects (0 after
 *	a success)
 * @grow_backoff_ms: backoff after a failed extra connect (conns_per_peer;
 *	0 after a success)
 * @grow_at: jiffies: no extra connect before (with @grow_backoff_ms)
 * @conn_cursor: the established conn the next message takes, in turn
 * @last_error: errno of the last failure
 * @last_reject: reason of the last reject received
 * @n: the __u32 counters of O2LND_PEER_COUNTERS, same names (ni->lock)
 * @st: its __u64 counters, same names (atomic, no lock)
 */
struct o2_peer {
	struct hlist_node node;
	struct kref ref;
	struct o2_ni *ni;
	u64 nid;
	struct list_head conns;
	struct list_head tx_queue;
	struct o2_txcr txcr;
	struct list_head credit_q;
	struct o2_txcr rtrcr;
	struct list_head rtr_q;
	unsigned long rtr_probe_at;
	int ntx;
	bool down;
	u32 failures;
	u32 downs;
	unsigned long alive;
	u64 incarnation;
	struct o2_connparams cp;
	bool reconnect;
	unsigned long reconnect_at;
	int races;
	bool race_claimed;
	int retries;
	int addr_retries;
	bool in_table;
	enum o2_peer_state state;
	unsigned int backoff_ms;
	unsigned int grow_backoff_ms;
	unsigned long grow_at;
	u32 conn_cursor;
	int last_error;
	u8 last_reject;
	struct {
		u32 races_received;
		u32 races_sent;
		u32 connects;
		u32 connect_failures;
		u32 rejects_sent;
		u32 rejects_received;
		u32 stale_closes;
		u32 phase_timeouts;
	} n;
	struct {
		atomic64_t send_count;
		atomic64_t recv_count;
		atomic64_t drop_count;
		atomic64_t error_count;
		atomic64_t send_bytes;
		atomic64_t recv_bytes;
		atomic64_t tx_timeouts;
	} st;
};

/* phases of an active connect, for deadlines and logs */
enum o2_conn_phase {
	O2_PHASE_NONE,
	O2_PHASE_ADDR,
	O2_PHASE_ROUTE,
	O2_PHASE_CONNECT,
};

/**
 * struct o2_rx - one receive buffer
 * @cqe: completion callback
 * @conn: owner
 * @msg: buffer of O2_MAX_MSG_SIZE bytes
 * @dma: its DMA address
 */
struct o2_rx {
	struct ib_cqe cqe;
	struct o2_conn *conn;
	void *msg;
	u64 dma;
};

/**
 * struct o2_txbuf - a pre-mapped send buffer of a conn
 * @list: in conn->txb_free while free (conn->lock)
 * @buf: O2_MAX_MSG_SIZE bytes, mapped DMA_TO_DEVICE on the conn's
 *	device from o2_tx_bufs_alloc() to o2_tx_bufs_free()
 * @dma: its DMA address
 *
 * A message is copied into one when it is posted and the buffer goes
 * back when its Send completes: one per Send in flight, so a conn has
 * concurrent_sends of them and never waits for one (credits cap
 * nposted at concurrent_sends).  Nothing is mapped per message.
 */
struct o2_txbuf {
	struct list_head list;
	void *buf;
	u64 dma;
};

/**
 * struct o2_conn - one RC connection
 * @ni_list: in ni->conns (ni->conns_lock), from allocation to release
 * @created: jiffies at allocation
 * @parked: a CONNECT_REQUEST held unanswered by a fault rule
 * @peer_list: in peer->conns (ni->lock)
 * @ref: references
 * @ni: our NI
 * @peer: the peer (holds a reference)
 * @dev: RDMA device resources are on (holds a user count), or NULL
 * @cmid: the cm_id
 * @cq: completion queue
 * @comp_vector: @cq's completion vector (o2_comp_vector_pick())
 * @qp: queue pair
 * @lock: protects the fields below it
 * @state: O2_CONN_*
 * @phase: active connect phase
 * @active: we initiated it
 * @extra: an active connect beyond the peer's first (conns_per_peer)
 * @deadline: jiffies by which the current connect phase must end
 * @error: why it closes
 * @cp: negotiated parameters
 * @peer_stamp: the peer's incarnation on this conn
 * @cr: credits, reserved credits, sends in flight, send-queue slots
 *	(credits.h)
 * @tx_queue: credited txs waiting for a credit or a slot
 * @tx_queue_rsrvd: requests waiting for a reserved credit
 * @tx_queue_nocred: NOOPs and completions (need no credit)
 * @last_send: jiffies of the last Send posted (keepalive)
 * @send_progress: jiffies of the last send completion, or of the post
 *	that found no send in flight (o2_sends_stalled())
 * @keepalives: keepalive NOOPs sent (O2LND_CONN_COUNTERS, @lock)
 * @send_count: messages posted (O2LND_CONN_COUNTERS, @lock)
 * @rtr_held: receive buffers held by messages waiting for a router
 *	buffer or being copied out of one; teardown waits for 0, which
 *	o2_rtr_conn_closed() makes immediate
 * @rtr_closed: o2_rtr_conn_closed() ran: no message of it may wait any
 *	more (o2_rtr_lock)
 * @late_sends: Send completions held back by a SEND_DELAY fault; teardown
 *	waits for them after the drain
 * @hold_sends: iWARP passive side: nothing is posted until the first
 *	message arrives (the initiator must send first, RDMAP/MPA)
 * @greet: iWARP active side: send a NOOP at once if nothing else goes,
 *	so that the passive side may start sending
 * @nudge: iWARP active side: NOOPs wake a peer that has said nothing
 *	(o2_nudge_due())
 * @heard: a message arrived on it (@lock)
 * @last_rx: jiffies of the last message that arrived on it (@lock)
 * @surplus: a race left it beside another conn with its peer
 *	(o2_cm_established()): o2lnd sends nothing new on it and closes it
 *	once quiet (o2_surplus_close_due()); set under ni->lock, cleared
 *	there when it is the peer's last conn
 * @surplus_at: jiffies when it became surplus
 * @nudges: NOOPs posted on it while nothing had arrived (@lock)
 * @nrx: receive buffers
 * @rxs: receive buffers
 * @ntxb: send buffers (struct o2_txbuf): concurrent_sends
 * @txbs: send buffers
 * @txb_free: the free ones (conn->lock)
 * @connect_work: connd work starting an active connect
 * @teardown: connd work destroying the conn
 * @drained: teardown: the QP is drained and unposted txs are handed on
 * @in_setup: an active connect's ROUTE_RESOLVED callback is making the QP
 *	and sending the request (set with the CONNECT phase, under @lock):
 *	the teardown waits for it before it touches the QP (a close from
 *	elsewhere may come in between)
 * @disconnected: rdma_disconnect() was called, by the DISCONNECTED callback
 *	or the teardown (o2_conn_claim_disconnect(); @lock)
 * @req_sent: our CONNREQ is on the wire, since @req_sent_at (jiffies;
 *	@lock)
 * @req_barred: a race verdict withdrew this connect before its CONNREQ
 *	went out: it never will (@lock)
 * @port_wait: in o2_port_waits while the teardown waits for its port to
 *	come back (o2_port_waits_lock)
 * @posted: txs whose signaled work request (the message's Send, or an
 *	invalidation) is posted and not completed yet (@lock); tx->list
 *	links them
 */
struct o2_conn {
	struct list_head ni_list;
	unsigned long created;
	bool parked;
	struct list_head peer_list;
	struct kref ref;
	struct o2_ni *ni;
	struct o2_peer *peer;
	struct o2_dev *dev;
	struct rdma_cm_id *cmid;
	struct ib_cq *cq;
	int comp_vector;
	struct ib_qp *qp;
	spinlock_t lock;	/* state, credits, tx queues */
	enum o2_conn_state state;
	enum o2_conn_phase phase;
	bool active;
	bool extra;
	unsigned long deadline;
	int error;
	struct o2_connparams cp;
	u64 peer_stamp;
	struct o2_credits cr;
	struct list_head tx_queue;
	struct list_head tx_queue_rsrvd;
	struct list_head tx_queue_nocred;
	unsigned long last_send;
	unsigned long send_progress;
	u32 keepalives;
	u64 send_count;
	atomic_t late_sends;
	atomic_t rtr_held;
	bool rtr_closed;
	bool hold_sends;
	bool greet;
	bool nudge;
	bool heard;
	unsigned long last_rx;
	bool surplus;
	unsigned long surplus_at;
	u8 nudges;
	int nrx;
	struct o2_rx *rxs;
	int ntxb;
	struct o2_txbuf *txbs;
	struct list_head txb_free;
	struct work_struct connect_work;
	struct work_struct teardown;
	bool drained;
	bool in_setup;
	bool disconnected;
	bool req_sent;
	bool req_barred;
	unsigned long req_sent_at;
	struct list_head port_wait;
	struct list_head posted;
};

/**
 * struct o2_write_wr - one RDMA WRITE of a tx's bulk data
 * @wr: the work request
 * @sge: its local buffer (a range of the bulk MR)
 */
struct o2_write_wr {
	struct ib_rdma_wr wr;
	struct ib_sge sge;
};

/* a sink's descriptor has one fragment (o2iblnd maps it with one MR) */
#define O2_TX_WRITES_INLINE	2

/**
 * struct o2_tx - one outgoing message (or one invalidation)
 * @cqe: Send completion callback
 * @list: in a peer or conn queue
 * @ref: references
 * @ni: NI it is sent from
 * @conn: conn it is posted on (set when posted)
 * @type: O2_MSG_* (0 for an invalidation)
 * @q: the conn queue it waits on before it is posted (set when made)
 * @counted: it counts against the ntx parameter (every message but NOOPs)
 * @inv_mr: if set, the tx carries no message: only a signaled LOCAL_INV
 *	of this MR (o2_tx_alloc_inv())
 * @inv_done: its owner's part of that LOCAL_INV's completion (@clean:
 *	it succeeded), called by tx.c after the conn's accounting
 * @nob: message length including the header
 * @msg: O2_MAX_MSG_SIZE buffer
 * @txb: the conn's send buffer @msg was copied into while posted, or
 *	NULL
 * @deadline: jiffies by which a tx queued on a conn must be posted: the
 *	deadline of this attempt (o2_attempt_deadline()); before the first
 *	launch, the message's own when @has_deadline
 * @msg_deadline: jiffies: the message's deadline, its resends included
 *	(set by o2_ni_launch(); LNet's msg_deadline)
 * @status: result
 * @resends: times it was sent again after its connection failed
 * @nid: destination NID (set by o2_ni_launch())
 * @has_deadline: @deadline was set by the owner (else launch gives the
 *	message o2_msg_timeout_of() from the timeout parameter)
 * @peer: the LNet peer whose tx credit it takes (a reference), set at the
 *	first launch; NULL for NOOPs
 * @held: O2_TX_HELD_* credits it holds, returned when it completes
 * @keepalive: a NOOP sent because the conn was idle
 * @wrs: work requests it posts (send-queue slots)
 * @late_work: handles a Send completion held back by a SEND_DELAY fault
 * @late_status: that completion's status
 * @bulk: a bulk buffer this message registers (@reg) and/or writes to
 *	the peer's @rd before it is sent (a reference), or NULL
 * @reg: post an IB_WR_REG_MR of @bulk's MR before the message
 * @nwrites: RDMA WRITEs of @bulk into the peer's sink, posted before the
 *	message (o2_tx_set_writes()), or 0
 * @writes: those work requests: @writes_inline, or kcalloc'ed for a
 *	descriptor of more than O2_TX_WRITES_INLINE fragments
 * @writes_inline: room for the usual one-fragment descriptor
 * @wr_inv: the LOCAL_INV of an invalidation tx, or the one before @reg's
 *	REG_MR (o2_dev.reg_replayed)
 * @wr_reg: @reg's REG_MR
 * @wr_send: the message's Send
 * @sge: its buffer
 *	(the work requests live in the tx so that the txs o2_conn_check_sends()
 *	posts go chained, in one ib_post_send(); filled when posted)
 * @unposted: only the first of its work requests were accepted by the
 *	device (a failed ib_post_send()): it waits on conn->posted for the
 *	QP's teardown (o2_conn_reclaim_posted()) with the rest
 * @done: its owner's completion, or NULL: called once, by the last
 *	reference (after the Send completion of a posted tx, or when it
 *	fails unposted), with @status final.  The transport never calls
 *	its owner by name: a ping (@cookie), a selftest request
 *	(@cookie), a bulk exchange (@bulk) and a forwarded message
 *	(@owner) each set their own.
 * @owner: the owner's context for @done
 * @cookie: the owner's cookie for @done (the ping or selftest RPC)
 */
struct o2_tx {
	struct ib_cqe cqe;
	struct list_head list;
	struct kref ref;
	struct o2_ni *ni;
	struct o2_conn *conn;
	u8 type;
	enum o2_txq q;
	bool counted;
	struct o2_mr *inv_mr;
	void (*inv_done)(struct o2_tx *tx, bool clean);
	u32 nob;
	void *msg;
	struct o2_txbuf *txb;
	unsigned long deadline;
	unsigned long msg_deadline;
	int status;
	int resends;
	u64 nid;
	bool has_deadline;
	struct o2_peer *peer;
	u8 held;
	bool keepalive;
	int wrs;
	struct delayed_work late_work;
	enum ib_wc_status late_status;
	struct o2_bulk *bulk;
	bool reg;
	u32 nwrites;
	struct o2_write_wr *writes;
	struct o2_write_wr writes_inline[O2_TX_WRITES_INLINE];
	struct ib_send_wr wr_inv;
	struct ib_reg_wr wr_reg;
	struct ib_send_wr wr_send;
	struct ib_sge sge;
	bool unposted;
	void (*done)(struct o2_tx *tx);
	void *owner;
	u64 cookie;
};

#define O2_TX_HELD_PEER	0x1	/* a peer tx credit */
#define O2_TX_HELD_NI	0x2	/* an NI tx credit */
#define O2_TX_QUEUED	0x4	/* on peer->credit_q or ni->credit_q */

/* mr.c */
u32 o2_mr_max_pages(struct ib_device *ibdev);
void o2_mr_pool_init(struct o2_dev *dev);
struct o2_mr *o2_mr_get(struct o2_dev *dev);
void o2_mr_put(struct o2_mr *mr, bool clean);
void o2_mr_pool_destroy(struct o2_dev *dev);

void o2_dev_mr_stats(struct ib_device *ibdev, struct o2lnd_ioc_net *out);

/* pending.c: what waits for a peer's answer, by cookie */
enum o2_pend_kind {
	O2_PEND_PING,		/* ping.c: a ping's REPLY, a push's ACK */
	O2_PEND_BRW,		/* selftest.c: an RPC's ACK or REPLY */
	O2_PEND_BULK,		/* bulk.c: an exchange's next message */
	O2_PEND_KINDS
};

/**
 * struct o2_pend_wait - a caller sleeping until its request is answered
 * @cookie: the request's cookie: its key in the table, put on the wire
 * @done: completed once @finished
 * @finished: @status is final
 * @status: 0 or the errno the request ended with
 *
 * Inside a ping's or a selftest RPC's request; @finished and @status
 * change under the table's lock (o2_pend_wait_finish_locked()).
 */
struct o2_pend_wait {
	u64 cookie;
	struct completion done;
	bool finished;
	int status;
};

u64 o2_pend_cookie(void);
int o2_pend_wait_add(struct o2_pend_wait *w, void *obj,
		     enum o2_pend_kind kind);
void o2_pend_wait_finish_locked(struct o2_pend_wait *w, int status);
int o2_pend_wait_end(struct o2_pend_wait *w, u32 timeout_ms);
void o2_pend_lock(void);
void o2_pend_unlock(void);
int o2_pend_reserve(u64 cookie);
void o2_pend_unreserve(u64 cookie);
int o2_pend_add_locked(u64 cookie, void *obj, enum o2_pend_kind kind);
void *o2_pend_find_locked(u64 cookie, enum o2_pend_kind kind);
void o2_pend_del_locked(u64 cookie);
void *o2_pend_next_locked(u64 *cookie, enum o2_pend_kind kind);
void o2_pend_exit(void);

/* bulk.c: the RDMA exchanges (PUT_REQ .. GET_DONE) */
#define O2_BULK_HELD	1	/* o2_lnet_ops.bulk_req() holds the rx */
struct o2_bulk *o2_bulk_alloc(struct o2_ni *ni, enum o2_bulk_kind kind,
			      u32 nob, u64 seed, u32 flags, bool pooled);
struct o2_bulk *o2_bulk_alloc_kiov(struct o2_ni *ni, enum o2_bulk_kind kind,
				   const struct bio_vec *kiov, u32 niov,
				   u32 offset, u32 nob);
void o2_bulk_pool_trim(unsigned long now, bool all);
int o2_bulk_map_on(struct o2_bulk *b, struct o2_dev *dev);
void o2_bulk_drop_mr(struct o2_bulk *b, bool clean);
struct o2_tx *o2_bulk_tx(struct o2_ni *ni, u8 type, struct o2_bulk *b,
			 u32 body_len);
void o2_bulk_await(struct o2_bulk *b, struct o2_tx *tx);
void o2_bulk_desc(struct o2_bulk *b, struct o2_rdma_desc *rd);
int o2_bulk_sink_start(struct o2_conn *conn, const struct o2_putreq_msg *m,
		       const struct o2_bulk_owner *o);
int o2_bulk_sink_offer(struct o2_conn *conn, const struct o2_putreq_msg *m,
		       struct o2_bulk *b);
void o2_bulk_get_reply(struct o2_conn *conn, const struct o2_get_msg *m,
		       struct o2_bulk *b);
void o2_bulk_send_completion(struct o2_conn *conn, u8 type, u64 cookie,
			     int status);
void o2_bulk_rtr_nak(struct o2_conn *conn, const struct o2_putreq_msg *m,
		     int status);
struct o2_tx *o2_bulk_rtr_send(struct o2_ni *ni, u64 hop,
			       const struct o2_lnet_hdr *hdr,
			       struct o2_bulk *b,
			       const struct o2_bulk_owner *o);
int o2_bulk_rx(struct o2_conn *conn, struct o2_rx *rx, u8 type, void *body,
	       u32 len, bool flip, bool *credit_now);
void o2_bulk_put(struct o2_bulk *b);
void o2_bulk_conn_closed(struct o2_conn *conn);
void o2_bulk_expire(unsigned long now, bool all);

/* ni.c */
extern struct mutex o2_nis_mutex;
void o2_ni_lnd_init(struct o2_ni *ni);
int o2_ifaddr(const char *ifname, __be32 *addr, __be32 *mask);
int o2_ni_listen(struct o2_ni *ni, bool quiet);
void o2_ni_stop_listening(struct o2_ni *ni);
struct o2_dev *o2_ni_get_dev(struct o2_ni *ni);
void o2_ni_close_conns(struct o2_ni *ni, struct ib_device *ibdev, int error);
void o2_ni_fail_queued(struct o2_ni *ni, int error);
void o2_ni_wait_conns(struct o2_ni *ni);
void o2_ni_forget_peers(struct o2_ni *ni);
bool o2_ni_close_peer(struct o2_ni *ni, u64 nid, u32 *closed);
int o2_ni_peer_at(struct o2_ni *ni, u32 index, u64 *nid, u32 *refs);
int o2_ni_conn_at(struct o2_ni *ni, u32 index, u64 *nid, u32 *mtu);
void o2_nis_reattach(void);
void o2_nis_link_check(void);
void o2_ni_device_removed(struct ib_device *ibdev);

/* dev.c */
int o2_dev_init(void);
void o2_dev_exit(void);
struct o2_dev *o2_dev_get(struct ib_device *ibdev);
void o2_dev_put(struct o2_dev *dev);
bool o2_dev_port_down(struct rdma_cm_id *id);
bool o2_dev_port_event_take(void);
void *o2_msg_buf_alloc(struct ib_device *ibdev, enum dma_data_direction dir,
		       u64 *dma);
void o2_msg_buf_free(struct ib_device *ibdev, void *buf, u64 dma,
		     enum dma_data_direction dir);

/* conn.c */
bool o2_conn_set_state(struct o2_conn *conn, enum o2_conn_state state);
struct o2_conn *o2_conn_alloc(struct o2_ni *ni, struct o2_peer *peer,
			      bool active);
void o2_conn_put(struct o2_conn *conn);
int o2_conn_setup_qp(struct o2_conn *conn);
void o2_conn_release_qp(struct o2_conn *conn);
void o2_conn_close(struct o2_conn *conn, int error);
void o2_conn_established(struct o2_conn *conn);
void o2_our_connparams(struct o2_connparams *cp);
void o2_peer_close_stale(struct o2_peer *peer, u64 incarnation);
void o2_peer_update_state(struct o2_peer *peer);

/* cm.c */
int o2_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *event);
int o2_conn_start_active(struct o2_peer *peer, bool extra);
bool o2_peer_wants_conn_locked(struct o2_peer *peer);
void o2_peer_grow_backoff_locked(struct o2_peer *peer);

/* tx.c */
void o2_tx_pool_init(struct o2_ni *ni);
void o2_tx_pool_trim(struct o2_ni *ni);
struct o2_tx *o2_tx_alloc(struct o2_ni *ni, u8 type);
struct o2_tx *o2_tx_alloc_inv(struct o2_ni *ni, struct o2_mr *mr,
			      void (*inv_done)(struct o2_tx *tx, bool clean));
void o2_tx_put(struct o2_tx *tx);
int o2_tx_set_writes(struct o2_tx *tx, const struct o2_rdma_desc *rd);
void o2_tx_fail_list(struct list_head *txs, int error);
void o2_tx_fail_or_resend(struct list_head *txs, int error);
int o2_conn_queue_tx(struct o2_conn *conn, struct o2_tx *tx);
int o2_tx_bufs_alloc(struct o2_conn *conn);
void o2_tx_bufs_free(struct o2_conn *conn);
void o2_conn_check_sends(struct o2_conn *conn);
bool o2_conn_noop_due_locked(struct o2_conn *conn, unsigned long now);
unsigned int o2_conn_reclaim_posted(struct o2_conn *conn);
bool o2_conn_tx_late(struct o2_conn *conn, unsigned long now);

/* rx.c */
int o2_rx_alloc(struct o2_conn *conn);
void o2_rx_free(struct o2_conn *conn);
int o2_rx_post_all(struct o2_conn *conn);
void o2_rx_repost(struct o2_rx *rx, enum o2_rx_credit credit);
void o2_rx_credit_return(struct o2_conn *conn, enum o2_rx_credit credit);
void o2_rx_unhold(struct o2_conn *conn);

/* connd.c */
int o2_connd_init(void);
void o2_connd_exit(void);
void o2_connd_start_scan(void);
void o2_connd_teardown(struct o2_conn *conn);
bool o2_conn_claim_disconnect(struct o2_conn *conn);
void o2_connd_kick(void);
unsigned long o2_connect_timeout(void);

/**
 * struct o2_lnet_ops - the transport's only way up to LNet
 * @peer_init: LNet's part of a new peer (its tx and router credits),
 *	before it is in the table
 * @recv: an IMMEDIATE message's LNet part arrived on @conn (@payload,
 *	@nob bytes); true if LNet holds @rx (it reposts it later)
 * @bulk_req: a peer's PUT_REQ or GET_REQ arrived on @conn in @rx
 *	(@body checked by bulk.c; @rd_nob: the bytes a GET_REQ's sink
 *	offers): 0 if the upper layer answers it (o2_bulk_sink_start(),
 *	o2_bulk_sink_offer(), o2_bulk_get_reply(), o2_bulk_rtr_nak()),
 *	O2_BULK_HELD if it holds @rx to answer later (and reposts it then:
 *	O2_RX_CREDIT_NONE after a PUT_ACK, else O2_RX_CREDIT_PEER), or a
 *	negative errno that bulk.c refuses it with (PUT_NAK, GET_DONE)
 * @health: @peer answered (@ok) or failed to
 * @tx_finalize: LNet's part of a tx's release, after its owner's done:
 *	its tx credits go back (only for a tx LNet launched: tx->peer
 *	set; the release drops that peer reference after it)
 * @resend: a tx of a dead conn, unposted or flushed with @error: true
 *	if LNet took it for a resend, false if it must fail
 * @conn_closed: @conn is closed; the exchanges and router messages
 *	bound to it end
 * @tick: connd's scan (every O2_SCAN_INTERVAL): deadlines of what
 *	waits for LNet credits, bulk and router deadlines, and with
 *	@reattach, NIs without a device try to attach again
 * @device_removed: @ibdev is going away: the NIs on it close its
 *	conns and let go of it (o2_ni_device_removed(), and what the upper
 *	layer adds)
 * @ni_changed: @ni went down or up (its device removed or back, its
 *	link lost or back; o2_nis_mutex held): o2lnd's LNet pushes its
 *	ping info, Lustre's is told the link state
 *
 * Set once at load (o2_up) before any NI starts.  Every call is from
 * process context without o2lnd locks held, except where a member says
 * otherwise.
 */
struct o2_lnet_ops {
	void (*peer_init)(struct o2_peer *peer);
	bool (*recv)(struct o2_conn *conn, struct o2_rx *rx, void *payload,
		     u32 nob);
	int (*bulk_req)(struct o2_conn *conn, struct o2_rx *rx, u8 type,
			void *body, u32 rd_nob);
	void (*health)(struct o2_peer *peer, bool ok);
	void (*tx_finalize)(struct o2_tx *tx);
	bool (*resend)(struct o2_tx *tx, int error);
	void (*conn_closed)(struct o2_conn *conn);
	void (*tick)(unsigned long now, bool reattach);
	void (*device_removed)(struct ib_device *ibdev);
	void (*ni_changed)(struct o2_ni *ni);
};

/* peer.c */
extern const struct o2_lnet_ops *o2_up;
struct o2_ni *o2_ni_by_nid(u64 nid);
struct o2_ni *o2_ni_by_net(u32 net);
struct o2_ni *o2_ni_toward(u64 nid);
struct o2_peer *o2_peer_find_locked(struct o2_ni *ni, u64 nid);
struct o2_peer *o2_peer_find_or_create(struct o2_ni *ni, u64 nid);
void o2_peer_put(struct o2_peer *peer);
int o2_peer_send(struct o2_peer *peer, struct o2_tx *tx);

#endif /* _O2LND_LND_H */
