// SPDX-License-Identifier: GPL-2.0
/*
 * Spare flows, allocated in process context, so that the datapath can start
 * protecting a flow at its first packet: engines and stores are too large
 * for atomic allocations, and a flow created by a work item misses the
 * packets sent meanwhile (under load, tens of milliseconds: an RDMA
 * connection's whole first burst). The pool fills on first use and after
 * every take; when it is empty, creation falls back to the work item.
 */
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>
#include <linux/memcontrol.h>
#include <linux/sched/mm.h>
#include "crem_flow.h"
#include "crem_engine.h"

/* Spares per side: a connection set-up opens one flow per side and kind. */
#define CREM_POOL_SPARE 4

void crem_flow_free(struct crem_flow *f)
{
	crem_rs_flow_free(f->rs);
	kfree(f);
}

/*
 * A zeroed flow of @side with its Rust half (engine and stores), not set up,
 * charged to @t's memory cgroup whoever asks (netlink, or a work item
 * whose own cgroup is the kworkers' root).
 */
struct crem_flow *crem_flow_alloc(struct crem_flows *t, u8 side)
{
	struct mem_cgroup *old = set_active_memcg(t->memcg);
	struct crem_flow *f = kzalloc(sizeof(*f), CREM_GFP_FLOW);

	if (!f)
		goto out;
	f->key.side = side;
	f->rs = crem_rs_flow_new(f, container_of(t, struct crem_net, flows)->net, side);
	if (!f->rs) {
		kfree(f);
		f = NULL;
	}
out:
	set_active_memcg(old);
	return f;
}

static void crem_pool_refill(struct work_struct *w)
{
	struct crem_pool *p = container_of(w, struct crem_pool, refill);
	struct crem_flows *t = container_of(p, struct crem_flows, pool);
	u8 side;

	for (side = 0; side < 2; side++) {
		for (;;) {
			struct crem_flow *f;

			spin_lock_bh(&p->lock);
			if (p->closing || p->n[side] >= CREM_POOL_SPARE) {
				spin_unlock_bh(&p->lock);
				break;
			}
			spin_unlock_bh(&p->lock);
			f = crem_flow_alloc(t, side);
			if (!f)
				return; /* the next take tries again */
			spin_lock_bh(&p->lock);
			if (p->closing) {
				spin_unlock_bh(&p->lock);
				crem_flow_free(f);
				return;
			}
			list_add(&f->spare, &p->free[side]);
			p->n[side]++;
			spin_unlock_bh(&p->lock);
			cond_resched();
		}
	}
}

/* From softirq: a spare flow of @side, or NULL (then one is on its way). */
struct crem_flow *crem_pool_take(struct crem_pool *p, u8 side)
{
	struct crem_flow *f = NULL;

	if (side > 1)
		return NULL;
	spin_lock(&p->lock);
	if (!p->closing) {
		f = list_first_entry_or_null(&p->free[side], struct crem_flow, spare);
		if (f) {
			list_del(&f->spare);
			p->n[side]--;
		}
		schedule_work(&p->refill);
	}
	spin_unlock(&p->lock);
	return f;
}

void crem_pool_init(struct crem_pool *p)
{
	spin_lock_init(&p->lock);
	INIT_LIST_HEAD(&p->free[0]);
	INIT_LIST_HEAD(&p->free[1]);
	INIT_WORK(&p->refill, crem_pool_refill);
}

void crem_pool_exit(struct crem_pool *p)
{
	struct crem_flow *f, *n;
	u8 side;

	spin_lock_bh(&p->lock);
	p->closing = true;
	spin_unlock_bh(&p->lock);
	cancel_work_sync(&p->refill);
	for (side = 0; side < 2; side++) {
		list_for_each_entry_safe(f, n, &p->free[side], spare) {
			list_del(&f->spare);
			crem_flow_free(f);
		}
		p->n[side] = 0;
	}
}
