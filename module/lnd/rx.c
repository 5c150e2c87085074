// SPDX-License-Identifier: GPL-2.0
/*
 * o2lnd: receive buffers: allocation, posting, Receive completions and
 * validation of every incoming message.
 */
#include <linux/slab.h>
#include <linux/ratelimit.h>
#include "lnd.h"
#include "trace.h"

static void o2_rx_done(struct ib_cq *cq, struct ib_wc *wc);

/**
 * o2_rx_alloc() - allocate and map conn->nrx receive buffers
 * @conn: the conn, with conn->dev set
 *
 * Return: 0 or -ENOMEM; partial allocations are undone by o2_rx_free().
 */
int o2_rx_alloc(struct o2_conn *conn)
{
	struct ib_device *ibdev = conn->dev->ibdev;
	int i;

	conn->rxs = kcalloc(conn->nrx, sizeof(*conn->rxs), GFP_KERNEL);
	if (!conn->rxs)
		return -ENOMEM;
	for (i = 0; i < conn->nrx; i++) {
		struct o2_rx *rx = &conn->rxs[i];

		rx->conn = conn;
		rx->cqe.done = o2_rx_done;
		rx->msg = o2_msg_buf_alloc(ibdev, DMA_FROM_DEVICE, &rx->dma);
		if (!rx->msg)
			return -ENOMEM;
	}
	return 0;
}

/**
 * o2_rx_free() - unmap and free the receive buffers
 * @conn: the conn; its QP is drained or destroyed
 */
void o2_rx_free(struct o2_conn *conn)
{
	int i;

	if (!conn->rxs)
		return;
	for (i = 0; i < conn->nrx; i++) {
		struct o2_rx *rx = &conn->rxs[i];

		if (!rx->msg)
			break;
		o2_msg_buf_free(conn->dev->ibdev, rx->msg, rx->dma,
				DMA_FROM_DEVICE);
	}
	kfree(conn->rxs);
	conn->rxs = NULL;
}

/* Caller holds conn->lock. */
static int o2_rx_post_locked(struct o2_conn *conn, struct o2_rx *rx)
{
	struct ib_recv_wr wr = {};
	struct ib_sge sge;

	lockdep_assert_held(&conn->lock);
	if (conn->state >= O2_CONN_CLOSING)
		return -ECONNABORTED;
	ib_dma_sync_single_for_device(conn->dev->ibdev, rx->dma,
				      O2_MAX_MSG_SIZE, DMA_FROM_DEVICE);
	sge.addr = rx->dma;
	sge.length = O2_MAX_MSG_SIZE;
	sge.lkey = conn->dev->pd->local_dma_lkey;
	wr.wr_cqe = &rx->cqe;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	return ib_post_recv(conn->qp, &wr, NULL);
}

/**
 * o2_rx_post_all() - post every receive buffer of a new conn
 * @conn: the conn
 *
 * Return: 0 or an errno.
 */
int o2_rx_post_all(struct o2_conn *conn)
{
	int i, rc = 0;

	spin_lock(&conn->lock);
	for (i = 0; i < conn->nrx && !rc; i++)
		rc = o2_rx_post_locked(conn, &conn->rxs[i]);
	spin_unlock(&conn->lock);
	return rc;
}

static void o2_rx_protocol_error(struct o2_conn *conn, const char *what,
				 int rc)
{
	char nid[O2_NIDSTR_SIZE];

	atomic64_inc(&conn->ni->stats.drop_count);
	atomic64_inc(&conn->ni->stats.error_count);
	atomic64_inc(&conn->peer->st.drop_count);
	atomic64_inc(&conn->peer->st.error_count);
	pr_warn_ratelimited("o2lnd: %s from %s: %d, closing connection\n",
			    what, o2_nid_format(conn->peer->nid, nid,
						sizeof(nid)), rc);
	o2_conn_close(conn, rc);
}

static void o2_rx_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct o2_rx *rx = container_of(wc->wr_cqe, struct o2_rx, cqe);
	struct o2_conn *conn = rx->conn;
	struct o2_msg_hdr *hdr = rx->msg;
	struct o2_msg_expect exp = {};
	struct o2_fault_hit hit;
	enum o2_rx_credit credit;
	bool flip, credit_now;
	int rc;
	u8 type = 0;

	if (wc->status != IB_WC_SUCCESS) {
		if (wc->status != IB_WC_WR_FLUSH_ERR)
			o2_rx_protocol_error(conn, "receive error", -EIO);
		return;
	}
	ib_dma_sync_single_for_cpu(conn->dev->ibdev, rx->dma,
				   O2_MAX_MSG_SIZE, DMA_FROM_DEVICE);
	/* the type byte is the same in either byte order */
	if (wc->byte_len >= sizeof(*hdr))
		type = hdr->type;
	if (type && o2_fault_fire(O2LND_FAULT_MSG_CORRUPT, type,
				  conn->ni->nid, conn->peer->nid, &hit))
		((u8 *)rx->msg)[0] ^= 0x5a;	/* the magic: refused */
	flip = wc->byte_len >= sizeof(*hdr) &&
	       hdr->magic == swab32(O2_MSG_MAGIC);
	exp.nob = wc->byte_len;
	exp.srcnid = conn->peer->nid;
	exp.dstnid = conn->ni->nid;
	exp.srcstamp = conn->peer_stamp;
	exp.dststamp = conn->ni->stamp;
	rc = o2_msg_unpack(rx->msg, &exp);
	if (rc) {
		o2_rx_protocol_error(conn, "bad message", rc);
		return;
	}

	spin_lock(&conn->lock);
	rc = o2_credits_receive(&conn->cr, hdr->credits);
	conn->hold_sends = false;	/* iWARP: the initiator has spoken */
	conn->heard = true;
	conn->last_rx = jiffies;
	/*
	 * A message on a conn still waiting for ESTABLISHED: the peer has
	 * accepted, so the event is due at once (it comes from another
	 * work queue than this completion).  If it was lost, do not wait
	 * for the whole phase deadline.
	 */
	if (conn->state == O2_CONN_ACTIVE_CONNECT &&
	    time_after(conn->deadline, jiffies + O2_ESTABLISH_GRACE))
		conn->deadline = jiffies + O2_ESTABLISH_GRACE;
	spin_unlock(&conn->lock);
	if (rc) {
		o2_rx_protocol_error(conn, "credit overflow", rc);
		return;
	}
	if (hdr->credits)
		trace_o2lnd_credits_returned(conn->ni->nid, conn->peer->nid,
					     hdr->credits,
					     READ_ONCE(conn->cr.credits));
	o2_up->health(conn->peer, true);

	credit = o2_rx_credit_of(hdr->type);
	if (hdr->type != O2_MSG_NOOP && hdr->type != O2_MSG_CONNREQ &&
	    hdr->type != O2_MSG_CONNACK &&
	    o2_fault_fire(O2LND_FAULT_MSG_DROP, hdr->type, conn->ni->nid,
			  conn->peer->nid, &hit)) {
		/* lost after the wire: its credit still returns */
		atomic64_inc(&conn->ni->stats.drop_count);
		atomic64_inc(&conn->peer->st.drop_count);
		if (hdr->type == O2_MSG_PUT_REQ)
			credit = O2_RX_CREDIT_PEER;
		goto repost;
	}
	switch (hdr->type) {
	case O2_MSG_NOOP:
		break;
	case O2_MSG_PUT_REQ:
	case O2_MSG_PUT_NAK:
	case O2_MSG_PUT_ACK:
	case O2_MSG_PUT_DONE:
	case O2_MSG_GET_REQ:
	case O2_MSG_GET_DONE:
		rc = o2_bulk_rx(conn, rx, hdr->type, rx->msg + sizeof(*hdr),
				hdr->nob - sizeof(*hdr), flip, &credit_now);
		if (rc == O2_BULK_HELD)
			return;	/* the upper layer reposts it */
		if (rc) {
			o2_rx_protocol_error(conn, "bad bulk message", rc);
			return;
		}
		if (hdr->type == O2_MSG_PUT_REQ && credit_now)
			credit = O2_RX_CREDIT_PEER;
		break;
	case O2_MSG_IMMEDIATE:
		atomic64_inc(&conn->ni->stats.recv_count);
		atomic64_add(hdr->nob, &conn->ni->stats.recv_bytes);
		atomic64_inc(&conn->peer->st.recv_count);
		atomic64_add(hdr->nob, &conn->peer->st.recv_bytes);
		if (o2_up->recv(conn, rx, rx->msg + sizeof(*hdr),
				hdr->nob - sizeof(*hdr)))
			return;	/* held by the router: o2_rx_repost() */
		break;
	default:
		/* CONNREQ/CONNACK on a live conn */
		o2_rx_protocol_error(conn, "unexpected message type",
				     -EPROTO);
		return;
	}

repost:
	o2_rx_repost(rx, credit);
}

/**
 * o2_rx_repost() - post a receive buffer again once its message is done
 * @rx: the buffer
 * @credit: what its message gives back (o2_rx_credit_of())
 *
 * From the Receive completion, or later for a buffer the router held
 * (o2_rtr_forward()).  On a closing conn the buffer stays unposted.
 * Callable from process context holding no o2lnd lock.
 */
void o2_rx_repost(struct o2_rx *rx, enum o2_rx_credit credit)
{
	struct o2_conn *conn = rx->conn;
	int rc;

	spin_lock(&conn->lock);
	rc = o2_rx_post_locked(conn, rx);
	if (!rc)
		o2_credits_repost(&conn->cr, credit);
	spin_unlock(&conn->lock);
	if (rc && rc != -ECONNABORTED)
		o2_conn_close(conn, rc);
	else
		o2_conn_check_sends(conn);
}

/**
 * o2_rx_unhold() - an upper layer lets go of a receive buffer it held
 * @conn: the buffer's conn, whose teardown waits until none is held
 *	(conn->rtr_held, counted up by the holder)
 */
void o2_rx_unhold(struct o2_conn *conn)
{
	if (atomic_dec_and_test(&conn->rtr_held))
		wake_up(&o2_exit_waitq);
}

/**
 * o2_rx_credit_return() - give back the credit a message kept
 * @conn: the conn the message came on
 * @credit: the credit (O2_RX_CREDIT_PEER: a PUT_REQ that was to be
 *	forwarded and is refused, o2_bulk_rtr_nak())
 *
 * For a message whose buffer was reposted at once but whose credit was
 * kept until its exchange ends.  Process context, holding no o2lnd lock.
 */
void o2_rx_credit_return(struct o2_conn *conn, enum o2_rx_credit credit)
{
	spin_lock(&conn->lock);
	o2_credits_repost(&conn->cr, credit);
	spin_unlock(&conn->lock);
	o2_conn_check_sends(conn);
}
