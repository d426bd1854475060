// SPDX-License-Identifier: GPL-2.0
/*
 * A netns's flows (the table that finds them is Rust's, rust/flows.rs, and
 * so is their creation, rust/create.rs): the hook's way to them, flow-new's
 * checks, teardown; the socket's datagrams (rust/dispatch.rs routes them). See crem_flow.h for the
 * locking rules.
 */
#include <linux/module.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/ip.h>
#include <linux/netfilter.h>
#include <linux/netlink.h>
#include <net/ip.h>
#include <net/inet_ecn.h>
#include <linux/etherdevice.h>
#include <linux/netfilter_bridge.h>
#include <linux/rtnetlink.h>
#include <net/gso.h>
#include "crem_flow.h"
#include "crem_engine.h"

/* The flow of @k (under RCU): the Rust table's (rust/flows.rs). */
struct crem_flow *crem_flow_lookup(struct crem_net *cn, const struct crem_flow_key *k)
{
	return crem_rs_flows_lookup(cn->rs, k->saddr, k->daddr, k->dqp, k->side, k->kind);
}

/* ---- Callbacks from the engines (under the flow's lock, BH off). ---- */

/* ---- Creation (rust/create.rs makes the flows). ---- */

struct sk_buff *crem_glue_ntf_alloc(struct crem_net *cn, bool may_sleep)
{
	return crem_nl_flow_ntf_alloc(cn, may_sleep ? GFP_KERNEL : GFP_ATOMIC);
}

/* BH off (rust/create.rs inserts under it): nothing here sleeps. */
void crem_glue_flow_up(struct crem_flow *f, struct sk_buff *ntf)
{
	atomic64_inc(&f->cn->dp[CREM_EV_FLOW_UP]);
	crem_gc_start(f->cn);
	/* Sent before a flow-down of @f can be (that one waits for our section). */
	crem_nl_flow_ntf_send(f->cn, ntf, f, CREM_CMD_FLOW_UP);
}

/*
 * flow-new: the operator's sender flow for @k, set up ahead of its traffic
 * (process context). @fixed: it keeps @fk and @fm, no adaptive policy.
 */
int crem_flow_add(struct crem_net *cn, const struct crem_flow_key *k, bool fixed, u8 fk, u8 fm,
		  struct netlink_ext_ack *extack)
{
	struct crem_flow_request req = { .key = *k, .ttl = 64, .fixed = fixed, .k = fk, .m = fm };
	int err;

	err = crem_rs_flow_add(cn->rs, &req);
	switch (err) {
	case -ENOTCONN:
		NL_SET_ERR_MSG(extack, "CREM is not running in this netns: set port and role first");
		break;
	case 0:
	case -ENOMEM:
		break;
	case -EHOSTUNREACH:
		NL_SET_ERR_MSG_FMT(extack, "no peer is configured for the destination %pI4 (set peer PREFIX=ADDR)",
				   &k->daddr);
		break;
	case -EEXIST:
		NL_SET_ERR_MSG(extack, "a sender flow for these addresses, dest-qp and kind exists");
		break;
	case -ENOSPC:
		NL_SET_ERR_MSG_FMT(extack, "max-flows (%u) sender flows are set up already",
				   READ_ONCE(cn->cfg.max_flows));
		break;
	case -EINVAL:
		NL_SET_ERR_MSG(extack, "the engine refused the flow's parameters (k, m or the netns defaults)");
		break;
	default:
		NL_SET_ERR_MSG(extack, "CREM is stopping in this netns");
	}
	return err;
}

/* ---- Teardown. ---- */

static void crem_flow_unlink(struct crem_flows *t, struct crem_flow *f)
{
	lockdep_assert_held(&t->lock);
	/* Every remover found @f in the table under t->lock: still there. */
	WARN_ON_ONCE(!crem_rs_flow_unlink(f->rs));
}

/* Counters a flow's owner no longer reports go on counting in the netns totals. */
void crem_flows_retire(struct crem_net *cn, const u64 *c)
{
	int i;

	spin_lock_bh(&cn->flows.lock);
	for (i = 0; i < CREM_FS_N; i++)
		cn->flows.retired[i] += c[i];
	spin_unlock_bh(&cn->flows.lock);
}

/*
 * Releases everything a flow holds (no reader can reach it any more). Its
 * last counters (its CLOSE included) are read in the section that marks it
 * dead, so a concurrent flow-reset counts them once.
 */
static void crem_flow_kill(struct crem_flow *f)
{
	struct crem_flow_info *fi = kmalloc(sizeof(*fi), GFP_KERNEL);

	crem_rs_flow_kill(f->rs, f->close_with, fi);
	if (fi)
		crem_flows_retire(f->cn, fi->counters);
	kfree(fi);
}

void crem_flows_reap(struct crem_net *cn, struct list_head *gone, bool notify)
{
	struct crem_flow *f, *n;

	if (list_empty(gone))
		return;
	synchronize_net(); /* no hook, socket, dump or creation finds them any more */
	list_for_each_entry_safe(f, n, gone, kill) {
		if (notify) /* its last state, before the engine ends */
			crem_nl_flow_ntf_send(cn, crem_nl_flow_ntf_alloc(cn, GFP_KERNEL), f,
					      CREM_CMD_FLOW_DOWN);
		crem_flow_kill(f);
		crem_rs_flow_free(f);
		atomic64_inc(&cn->dp[CREM_EV_FLOW_DOWN]);
	}
}

void crem_flow_remove(struct crem_flows *t, struct crem_flow *f, struct list_head *gone, s8 close)
{
	crem_flow_unlink(t, f);
	f->close_with = close;
	list_add(&f->kill, gone);
}

/* A removal walk (under flows.lock): where the flows removed go. */
struct crem_flush {
	struct crem_flows *t;
	struct list_head *gone;
};

static bool crem_flush_one(struct crem_flow *f, void *arg)
{
	struct crem_flush *r = arg;

	crem_flow_remove(r->t, f, r->gone, CREM_CLOSE_NONE);
	return false;
}

/* @notify: flow-down for each (not while the netns is dismantled). */
static void __crem_flows_flush(struct crem_net *cn, bool notify)
{
	struct crem_flows *t = &cn->flows;
	LIST_HEAD(gone);
	struct crem_flush r = { t, &gone };

	spin_lock_bh(&t->lock);
	crem_rs_flows_walk(cn->rs, NULL, crem_flush_one, &r);
	spin_unlock_bh(&t->lock);
	crem_flows_reap(cn, &gone, notify);
}

/* The socket's flows go with it (rust/socket.rs). */
void crem_glue_flows_flush(struct crem_net *cn)
{
	__crem_flows_flush(cn, true);
}

/*
 * NETDEV_UNREGISTER of @dev in @cn's netns (RTNL held): no stored packet
 * keeps a pointer to it (rust/store.rs). Flows already unlinked are
 * killed only after a grace period that this walk holds off.
 */
void crem_flows_dev_gone(struct crem_net *cn, const struct net_device *dev)
{
	ASSERT_RTNL();
	atomic64_add(crem_rs_flows_dev_gone(cn->rs, dev), &cn->dp[CREM_DROP_DEV_GONE]);
}

void crem_flows_init(struct crem_flows *t)
{
	spin_lock_init(&t->lock);
	INIT_DELAYED_WORK(&t->gc_work, crem_gc_work);
	INIT_WORK(&t->ev_work, crem_ev_work);
}

void crem_flows_exit(struct crem_net *cn)
{
	struct crem_flows *t = &cn->flows;

	/* No flow is made from here on (its queue and spares dropped). */
	crem_rs_flows_close(cn->rs);
	spin_lock_bh(&t->lock);
	t->closing = true;
	spin_unlock_bh(&t->lock);
	/*
	 * Readers (hooks, socket, timers) that saw the netns open may still be
	 * queueing collection or event work: wait for them before cancelling,
	 * or a work item queued after its cancel would outlive us. Nothing is
	 * inserted any more, so the collector is not started again.
	 */
	synchronize_net();
	cancel_delayed_work_sync(&t->gc_work);
	__crem_flows_flush(cn, false);
	/* No flow is left to mark an event. */
	cancel_work_sync(&t->ev_work);
}
