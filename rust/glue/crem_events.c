// SPDX-License-Identifier: GPL-2.0
/*
 * flow-change notifications: circuit breaker tripped or cleared, CLOSE
 * received. The engines report them under the flow's lock, in softirq; a
 * notification is built in process context (it allocates, and it reads the
 * flow under the same lock), so the event is marked on the flow (rust/host.rs)
 * and a work item of the namespace sends what is marked. Two of a kind in a row before
 * the work runs are sent once (the flow nest shows the state then).
 */
#include <linux/workqueue.h>
#include <net/genetlink.h>
#include "crem_flow.h"
#include "../../include/uapi/linux/crem.h"

void crem_glue_flow_event(struct crem_flow *f)
{
	struct crem_flows *t = &f->cn->flows;

	if (!READ_ONCE(t->closing))
		schedule_work(&t->ev_work);
}

/* One pass: the first flow with an event pending sends it (under RCU). */
struct crem_ev_pass {
	struct crem_net *cn;
	struct sk_buff *msg;
	bool sent;
};

static bool crem_ev_send_one(struct crem_flow *f, void *arg)
{
	struct crem_ev_pass *p = arg;
	u16 reason = 0;
	int ev = crem_rs_flow_ev_take(f->rs, &reason);

	if (ev < 0)
		return false;
	crem_nl_flow_event_send(p->cn, p->msg, f, ev, reason);
	p->sent = true;
	return true;
}

void crem_ev_work(struct work_struct *w)
{
	struct crem_net *cn = container_of(w, struct crem_net, flows.ev_work);

	for (;;) {
		/* Allocated ahead, outside RCU (NULL: no listener; counted). */
		struct sk_buff *msg = crem_nl_flow_ntf_alloc(cn, GFP_KERNEL);
		struct crem_ev_pass p = { .cn = cn, .msg = msg };

		crem_rs_flows_walk(cn->rs, NULL, crem_ev_send_one, &p);
		if (!p.sent) {
			consume_skb(msg); /* unused notification: not a drop */
			return;
		}
		cond_resched();
	}
}
