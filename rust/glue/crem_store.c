// SPDX-License-Identifier: GPL-2.0
/*
 * Packet stores of a flow, called by the engines under flow->lock: the CSF's
 * retained sources (skb clones by PSN, released on the RDMA ACK), the CRF's
 * kept sources and repair symbols (by engine slot) and held packets (by PSN,
 * for in-order release). Every octet is charged to the netns budget
 * (max-memory); a refusal is counted and the engine carries on without it.
 */
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <net/ip.h>
#include <linux/netdevice.h>
#include "crem_flow.h"
#include "crem_engine.h"

bool crem_mem_charge(struct crem_flow *f, u32 n)
{
	struct crem_net *cn = f->cn;

	if (atomic64_add_return(n, &cn->flows.mem) > READ_ONCE(cn->cfg.max_memory)) {
		atomic64_sub(n, &cn->flows.mem);
		f->ctr.store_full++;
		atomic64_inc(&cn->dp[CREM_DROP_MEMORY]);
		return false;
	}
	f->mem += n;
	return true;
}

void crem_mem_uncharge(struct crem_flow *f, u32 n)
{
	atomic64_sub(n, &f->cn->flows.mem);
	f->mem -= n;
}

int crem_store_alloc(struct crem_flow *f)
{
	if (f->key.side == CREM_SIDE_CSF) {
		f->slots = kvcalloc(CREM_CSF_SLOTS, sizeof(*f->slots), CREM_GFP_FLOW);
		return f->slots ? 0 : -ENOMEM;
	}
	f->slots = kvcalloc(CREM_CRF_WINDOW, sizeof(*f->slots), CREM_GFP_FLOW);
	f->rep = kvcalloc(CREM_CRF_REPAIRS, sizeof(*f->rep), CREM_GFP_FLOW);
	f->rep_len = kvcalloc(CREM_CRF_REPAIRS, sizeof(*f->rep_len), CREM_GFP_FLOW);
	f->held = kvcalloc(CREM_CRF_HELD, sizeof(*f->held), CREM_GFP_FLOW);
	return f->slots && f->rep && f->rep_len && f->held ? 0 : -ENOMEM;
}

/* After crem_rs_engine_fini: frees whatever the engine did not release. */
void crem_store_free(struct crem_flow *f)
{
	u32 i, n = f->key.side == CREM_SIDE_CSF ? CREM_CSF_SLOTS : CREM_CRF_WINDOW;

	for (i = 0; f->slots && i < n; i++)
		crem_slot_clear(f, &f->slots[i]);
	/* Held packets were released before (crem_flows_reap); one left here
	 * never reaches its receiver: a real drop. */
	for (i = 0; f->held && i < CREM_CRF_HELD; i++)
		crem_slot_drop(f, &f->held[i], SKB_DROP_REASON_QUEUE_PURGE);
	for (i = 0; f->rep && i < CREM_CRF_REPAIRS; i++)
		crem_glue_crf_drop_repair(f, i);
	kvfree(f->slots);
	kvfree(f->rep);
	kvfree(f->rep_len);
	kvfree(f->held);
	f->slots = NULL;
	f->rep = NULL;
	f->held = NULL;
	f->rep_len = NULL;
}

const u8 *crem_slot_data(const struct crem_slot *s)
{
	if (s->skb)
		return s->skb->data + s->off;
	return s->buf;
}

/*
 * Frees what @s keeps. Retained clones and kept sources are our copies of
 * packets that went on their way: their release is a normal free
 * (consume_skb), invisible to drop monitors. crem_slot_drop is for a packet
 * that is lost by it.
 */
static void crem_slot_free(struct crem_flow *f, struct crem_slot *s, bool drop,
			   enum skb_drop_reason reason)
{
	if (!s->skb && !s->buf)
		return;
	crem_mem_uncharge(f, s->skb ? s->skb->truesize : s->len);
	if (drop)
		kfree_skb_reason(s->skb, reason);
	else
		consume_skb(s->skb);
	kfree(s->buf);
	memset(s, 0, sizeof(*s));
}

void crem_slot_clear(struct crem_flow *f, struct crem_slot *s)
{
	crem_slot_free(f, s, false, SKB_CONSUMED);
}

void crem_slot_drop(struct crem_flow *f, struct crem_slot *s, enum skb_drop_reason reason)
{
	crem_slot_free(f, s, true, reason);
}

/*
 * Keeps @p: a clone of the packet being processed when @p lies in it (no
 * copy of the payload), a private copy otherwise (a restored packet).
 */
bool crem_store_keep_cur(struct crem_flow *f, struct crem_slot *s, u32 psn,
			 const u8 *p, u32 len)
{
	struct sk_buff *cur = f->cur;

	crem_slot_clear(f, s);
	if (cur && p == cur->data + f->cur_off) {
		if (!crem_mem_charge(f, cur->truesize))
			return false;
		s->skb = skb_clone(cur, GFP_ATOMIC);
		if (!s->skb) {
			crem_mem_uncharge(f, cur->truesize);
			f->ctr.clone_fail++;
			return false;
		}
		s->off = f->cur_off;
	} else {
		if (!crem_mem_charge(f, len))
			return false;
		s->buf = kmemdup(p, len, GFP_ATOMIC);
		if (!s->buf) {
			crem_mem_uncharge(f, len);
			f->ctr.clone_fail++;
			return false;
		}
	}
	s->psn = psn;
	s->len = len;
	return true;
}

/* ---- CSF retention ---- */

bool crem_glue_csf_keep(struct crem_flow *f, u32 psn, const u8 *p, u32 len)
{
	return crem_store_keep_cur(f, &f->slots[psn & (CREM_CSF_SLOTS - 1)], psn, p, len);
}

const u8 *crem_glue_csf_source(struct crem_flow *f, u32 psn, u32 *len)
{
	struct crem_slot *s = &f->slots[psn & (CREM_CSF_SLOTS - 1)];

	if ((!s->skb && !s->buf) || s->psn != psn)
		return NULL;
	*len = s->len;
	return crem_slot_data(s);
}

void crem_glue_csf_release(struct crem_flow *f, u32 first, u32 count)
{
	u32 i;

	count = min_t(u32, count, CREM_CSF_SLOTS);
	for (i = 0; i < count; i++) {
		u32 psn = (first + i) & 0xffffff;
		struct crem_slot *s = &f->slots[psn & (CREM_CSF_SLOTS - 1)];

		if (s->psn == psn)
			crem_slot_clear(f, s);
	}
}

/* ---- CRF symbols ---- */

bool crem_glue_crf_keep_source(struct crem_flow *f, u32 slot, u32 psn, const u8 *p, u32 len)
{
	if (slot >= CREM_CRF_WINDOW)
		return false;
	return crem_store_keep_cur(f, &f->slots[slot], psn, p, len);
}

const u8 *crem_glue_crf_source(struct crem_flow *f, u32 slot, u32 *len)
{
	struct crem_slot *s;

	if (slot >= CREM_CRF_WINDOW)
		return NULL;
	s = &f->slots[slot];
	if (!s->skb && !s->buf)
		return NULL;
	*len = s->len;
	return crem_slot_data(s);
}

void crem_glue_crf_drop_source(struct crem_flow *f, u32 slot)
{
	if (slot < CREM_CRF_WINDOW)
		crem_slot_clear(f, &f->slots[slot]);
}

/* Repair symbols are modified in place while decoding: always a copy. */
bool crem_glue_crf_keep_repair(struct crem_flow *f, u32 slot, const u8 *p, u32 len)
{
	if (slot >= CREM_CRF_REPAIRS)
		return false;
	crem_glue_crf_drop_repair(f, slot);
	if (!crem_mem_charge(f, len))
		return false;
	f->rep[slot] = kmemdup(p, len, GFP_ATOMIC);
	if (!f->rep[slot]) {
		crem_mem_uncharge(f, len);
		f->ctr.clone_fail++;
		return false;
	}
	f->rep_len[slot] = len;
	return true;
}

u8 *crem_glue_crf_repair(struct crem_flow *f, u32 slot, u32 *len)
{
	if (slot >= CREM_CRF_REPAIRS || !f->rep[slot])
		return NULL;
	*len = f->rep_len[slot];
	return f->rep[slot];
}

void crem_glue_crf_drop_repair(struct crem_flow *f, u32 slot)
{
	if (slot >= CREM_CRF_REPAIRS || !f->rep[slot])
		return;
	crem_mem_uncharge(f, f->rep_len[slot]);
	kfree(f->rep[slot]);
	f->rep[slot] = NULL;
	f->rep_len[slot] = 0;
}

/* ---- Held packets ---- */

bool crem_held_keep(struct crem_flow *f, u32 psn, struct sk_buff *skb)
{
	struct crem_slot *s = &f->held[psn & (CREM_CRF_HELD - 1)];

	if (s->skb) {
		/* A slot still busy (older PSN): let that one go first. */
		struct sk_buff *old = s->skb;

		s->skb = NULL;
		crem_mem_uncharge(f, old->truesize);
		f->ctr.held_dropped++;
		crem_inject(f, old);
	}
	if (!crem_mem_charge(f, skb->truesize))
		return false;
	s->skb = skb;
	s->psn = psn;
	return true;
}

/*
 * @skb goes on toward the RDMA receiver (rust/inject.rs), counted. Called
 * with the flow's lock held, BH disabled.
 */
void crem_inject(struct crem_flow *f, struct sk_buff *skb)
{
	if (crem_rs_inject(f->cn->net, &f->tpl, skb))
		f->ctr.inject_fail++;
	else
		f->ctr.injected++;
}

u8 crem_glue_crf_restored(struct crem_flow *f, u32 psn, const u8 *p, u32 len, bool hold)
{
	struct sk_buff *skb;
	u8 r = crem_rs_restore(&f->tpl, p, len, &skb);

	if (r == CREM_RESTORED_DROPPED)
		f->ctr.inject_fail++;
	if (r != CREM_RESTORED_VERIFIED)
		return r;
	if (!(hold && crem_held_keep(f, psn, skb)))
		crem_inject(f, skb);
	return CREM_RESTORED_VERIFIED;
}

void crem_glue_crf_release(struct crem_flow *f, u32 psn)
{
	struct crem_slot *s = &f->held[psn & (CREM_CRF_HELD - 1)];
	struct sk_buff *skb = s->skb;

	if (!skb || s->psn != psn)
		return;
	s->skb = NULL;
	crem_mem_uncharge(f, skb->truesize);
	crem_inject(f, skb);
}

/*
 * @dev is being unregistered. Our skbs hold no reference on the device they
 * arrived on, so none may outlive it with a pointer to it: held packets
 * that came on it are dropped (released later, they would carry a freed
 * device into the output path's hooks as their input device); retained and
 * kept clones are only ever read for their payload, and forget it.
 */
void crem_store_dev_gone(struct crem_flow *f, const struct net_device *dev)
{
	u32 i, n = f->key.side == CREM_SIDE_CSF ? CREM_CSF_SLOTS : CREM_CRF_WINDOW;

	lockdep_assert_held(&f->lock);
	for (i = 0; f->slots && i < n; i++)
		if (f->slots[i].skb && f->slots[i].skb->dev == dev)
			f->slots[i].skb->dev = NULL;
	for (i = 0; f->held && i < CREM_CRF_HELD; i++) {
		if (!f->held[i].skb || f->held[i].skb->dev != dev)
			continue;
		crem_slot_drop(f, &f->held[i], SKB_DROP_REASON_DEV_READY);
		f->ctr.held_dropped++;
		atomic64_inc(&f->cn->dp[CREM_DROP_DEV_GONE]);
	}
}
