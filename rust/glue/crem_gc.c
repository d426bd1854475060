// SPDX-License-Identifier: GPL-2.0
/*
 * The flow collector: once a second while flows exist, removes the flows
 * nothing uses any more, so that memory stays bounded by live traffic and a
 * flow whose negotiation failed or that was closed gets a fresh start:
 *   - idle: no packet and no message for flow_idle_s (RDMA QP numbers are
 *     reused, and a new connection must not inherit an old PSN space);
 *   - unprotected (HELLO never answered) or closed, for CREM_RETRY_NS: the
 *     next packet of the flow asks for a new one, with a new HELLO.
 */
#include <linux/module.h>
#include <linux/workqueue.h>
#include <linux/netdevice.h>
#include "crem_flow.h"

#define CREM_GC_PERIOD HZ
#define CREM_RETRY_NS (5ULL * NSEC_PER_SEC)

/* Seconds without packets or messages before a flow is removed; 0: never. */
static unsigned int flow_idle_s = 30;
module_param(flow_idle_s, uint, 0644);
MODULE_PARM_DESC(flow_idle_s, "seconds a flow may stay idle before it is removed (0 = never)");

/* Flow states of the netlink flow-state enum (rust/engine.rs state_code). */
#define CREM_STATE_UNPROTECTED 2
#define CREM_STATE_CLOSED 3

void crem_gc_start(struct crem_net *cn)
{
	queue_delayed_work(system_wq, &cn->flows.gc_work, CREM_GC_PERIOD);
}

/* @t older than @now by more than @span; @t may be later than @now (a packet
 * or a creation since @now was read), which is no age at all. */
static bool crem_older(u64 t, u64 now, u64 span)
{
	return (s64)(now - t) > (s64)span;
}

/*
 * Whether @f goes, and with which CLOSE: an idle flow has ended (reason
 * 1); a flow whose HELLO was never answered failed its parameter
 * synchronization (reason 2); a closed one has had its CLOSE.
 */
static s8 crem_flow_stale(struct crem_flow *f, struct crem_flow_info *fi, u64 now)
{
	u64 idle = (u64)READ_ONCE(flow_idle_s) * NSEC_PER_SEC;
	bool retry = crem_older(f->created_ns, now, CREM_RETRY_NS);

	crem_flow_info(f, fi);
	if (idle && crem_older(fi->last_ns, now, idle))
		return CREM_CLOSE_FLOW_ENDED;
	if (retry && fi->state == CREM_STATE_UNPROTECTED)
		return CREM_CLOSE_SYNC_FAILED;
	if (retry && fi->state == CREM_STATE_CLOSED)
		return CREM_CLOSE_NONE;
	return CREM_GC_KEEP;
}

/* A collection: what goes is marked under RCU, then removed under the lock. */
struct crem_gc_pass {
	struct crem_flow_info *fi;
	u64 now;
	bool any;
	struct crem_flows *t;
	struct list_head *gone;
};

static bool crem_gc_mark(struct crem_flow *f, void *arg)
{
	struct crem_gc_pass *p = arg;

	p->any |= (f->gc_close = crem_flow_stale(f, p->fi, p->now)) != CREM_GC_KEEP;
	return false;
}

/* Under flows.lock: a flow made since the marks was made with CREM_GC_KEEP. */
static bool crem_gc_remove(struct crem_flow *f, void *arg)
{
	struct crem_gc_pass *p = arg;

	if (f->gc_close != CREM_GC_KEEP)
		crem_flow_remove(p->t, f, p->gone, f->gc_close);
	return false;
}

void crem_gc_work(struct work_struct *w)
{
	struct crem_net *cn = container_of(to_delayed_work(w), struct crem_net, flows.gc_work);
	struct crem_flows *t = &cn->flows;
	struct crem_flow *f;
	LIST_HEAD(gone);
	struct crem_gc_pass p = {
		.fi = kmalloc(sizeof(*p.fi), GFP_KERNEL), .now = ktime_get_ns(), .t = t, .gone = &gone,
	};

	if (p.fi) {
		crem_rs_flows_walk(cn->rs, NULL, crem_gc_mark, &p);
		kfree(p.fi);
	}
	if (p.any) {
		spin_lock_bh(&t->lock);
		crem_rs_flows_walk(cn->rs, NULL, crem_gc_remove, &p);
		spin_unlock_bh(&t->lock);
		list_for_each_entry(f, &gone, kill)
			atomic64_inc(&cn->dp[CREM_EV_FLOW_EXPIRED]);
		/* CLOSE to the peer, flow-down to listeners, then freed. */
		crem_flows_reap(cn, &gone, true);
	}
	if (crem_rs_flows_count(cn->rs, -1) && !READ_ONCE(t->closing))
		crem_gc_start(cn);
}
