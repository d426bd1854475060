// SPDX-License-Identifier: GPL-2.0
/*
 * Counters and flows over the "crem" family: per-netns stats (the Rust
 * hook's counters, the datapath's, and the sum of all flows' counters
 * including flows gone since) and the flow dump, consistent under churn
 * through the table's generation number (NLM_F_DUMP_INTR when it moved).
 */
#include <net/genetlink.h>
#include <net/sock.h>
#include "crem_glue.h"
#include "crem_flow.h"
#include "crem-nl-gen.h"

/* The flow's state and counters; takes the flow's lock. */
void crem_flow_info(struct crem_flow *f, struct crem_flow_info *fi)
{
	memset(fi, 0, sizeof(*fi));
	spin_lock_bh(&f->lock);
	if (!f->dead)
		crem_rs_engine_info(f->eng, f->key.side, fi);
	BUILD_BUG_ON(sizeof(f->ctr) != CREM_FS_DATAPATH * sizeof(u64));
	memcpy(&fi->counters[CREM_FS_ENGINE], &f->ctr, sizeof(f->ctr));
	spin_unlock_bh(&f->lock);
}

/* Sum over all flows, past and present, since the last reset. */
static void crem_totals(struct crem_net *cn, u64 *sum)
{
	struct crem_flow_info *fi = kmalloc(sizeof(*fi), GFP_KERNEL);
	struct crem_flows *t = &cn->flows;
	struct crem_flow *f;
	int i;

	memset(sum, 0, CREM_FS_N * sizeof(u64));
	if (fi) {
		rcu_read_lock();
		list_for_each_entry_rcu(f, &t->list, all) {
			crem_flow_info(f, fi);
			for (i = 0; i < CREM_FS_N; i++)
				sum[i] += fi->counters[i];
		}
		rcu_read_unlock();
		kfree(fi);
	}
	spin_lock_bh(&t->lock);
	for (i = 0; i < CREM_FS_N; i++)
		sum[i] += cn->flows.retired[i] - cn->flows.base[i];
	spin_unlock_bh(&t->lock);
}

static int crem_put_counters(struct sk_buff *msg, int type, const u64 *c)
{
	struct nlattr *nest = nla_nest_start(msg, type);
	int i;

	if (!nest)
		return -EMSGSIZE;
	for (i = 0; i < CREM_FS_N; i++)
		if (nla_put_u64_64bit(msg, CREM_A_FLOW_STATS_SOURCES + i, c[i],
				      CREM_A_FLOW_STATS_PAD))
			return -EMSGSIZE;
	nla_nest_end(msg, nest);
	return 0;
}

#define CREM_RS_STATS (CREM_A_STATS_MALFORMED - CREM_A_STATS_ROCE_LOCAL_IN + 1)

int crem_nl_stats_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct crem_net *cn = crem_net(genl_info_net(info));
	u64 vals[CREM_RS_STATS], sum[CREM_FS_N];
	struct sk_buff *msg;
	struct nlattr *nest;
	void *hdr;
	u32 i, n;

	BUILD_BUG_ON(CREM_A_STATS_DROP_SEND - CREM_A_STATS_FLOWS_CREATED != CREM_DROP_SEND);
	n = crem_rs_stats(cn->rs, vals, CREM_RS_STATS);
	crem_totals(cn, sum);
	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_iput(msg, info);
	if (!hdr)
		goto nospace;
	nest = nla_nest_start(msg, CREM_A_CMD_STATS);
	if (!nest)
		goto nospace;
	for (i = 0; i < n; i++)
		if (nla_put_u64_64bit(msg, CREM_A_STATS_ROCE_LOCAL_IN + i, vals[i],
				      CREM_A_STATS_PAD))
			goto nospace;
	for (i = 0; i <= CREM_DROP_SEND; i++)
		if (nla_put_u64_64bit(msg, CREM_A_STATS_FLOWS_CREATED + i,
				      atomic64_read(&cn->dp[i]), CREM_A_STATS_PAD))
			goto nospace;
	if (nla_put_u64_64bit(msg, CREM_A_STATS_FLOWS_EXPIRED,
			      atomic64_read(&cn->dp[CREM_EV_FLOW_EXPIRED]), CREM_A_STATS_PAD))
		goto nospace;
	if (nla_put_u64_64bit(msg, CREM_A_STATS_FLOWS_ACTIVE, READ_ONCE(cn->flows.count),
			      CREM_A_STATS_PAD) ||
	    nla_put_u64_64bit(msg, CREM_A_STATS_MEMORY, atomic64_read(&cn->flows.mem),
			      CREM_A_STATS_PAD) ||
	    crem_put_counters(msg, CREM_A_STATS_TOTALS, sum))
		goto nospace;
	nla_nest_end(msg, nest);
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
nospace:
	nlmsg_free(msg);
	return -EMSGSIZE;
}

int crem_nl_stats_reset_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct crem_net *cn = crem_net(genl_info_net(info));
	u64 sum[CREM_FS_N];
	int i;

	crem_rs_stats_reset(cn->rs);
	for (i = 0; i < CREM_NR_DP; i++)
		atomic64_set(&cn->dp[i], 0);
	/* Flow counters are never rewound: the totals restart from here. */
	crem_totals(cn, sum);
	spin_lock_bh(&cn->flows.lock);
	for (i = 0; i < CREM_FS_N; i++)
		cn->flows.base[i] += sum[i];
	spin_unlock_bh(&cn->flows.lock);
	return 0;
}

static int crem_put_flow(struct sk_buff *msg, struct crem_flow *f, struct crem_flow_info *fi)
{
	struct nlattr *nest = nla_nest_start(msg, CREM_A_CMD_FLOW);

	crem_flow_info(f, fi);
	if (!nest ||
	    nla_put_u32(msg, CREM_A_FLOW_ID, fi->flow_id) ||
	    nla_put_in_addr(msg, CREM_A_FLOW_SRC, f->key.saddr) ||
	    nla_put_in_addr(msg, CREM_A_FLOW_DST, f->key.daddr) ||
	    nla_put_u32(msg, CREM_A_FLOW_DEST_QP, f->key.dqp) ||
	    nla_put_u8(msg, CREM_A_FLOW_SIDE, f->key.side) ||
	    nla_put_in_addr(msg, CREM_A_FLOW_PEER, f->peer) ||
	    nla_put_u8(msg, CREM_A_FLOW_STATE, fi->state) ||
	    nla_put_u8(msg, CREM_A_FLOW_CONFIG_ID, fi->config_id) ||
	    nla_put_u8(msg, CREM_A_FLOW_SCHEME, fi->scheme) ||
	    nla_put_u8(msg, CREM_A_FLOW_K, fi->k) ||
	    nla_put_u8(msg, CREM_A_FLOW_M, fi->m) ||
	    nla_put_u16(msg, CREM_A_FLOW_SYMBOL_LEN, fi->symbol_len) ||
	    nla_put_u32(msg, CREM_A_FLOW_SRTT_US, fi->srtt_us) ||
	    nla_put_u32(msg, CREM_A_FLOW_LOSS_PPM, fi->loss_ppm) ||
	    nla_put_u8(msg, CREM_A_FLOW_LOSS_CLASS, fi->loss_class) ||
	    nla_put_u8(msg, CREM_A_FLOW_BREAKER, fi->breaker) ||
	    nla_put_u64_64bit(msg, CREM_A_FLOW_MEMORY, READ_ONCE(f->mem), CREM_A_FLOW_PAD) ||
	    nla_put_u64_64bit(msg, CREM_A_FLOW_AGE_MS,
			      div_u64(ktime_get_ns() - f->created_ns, NSEC_PER_MSEC),
			      CREM_A_FLOW_PAD) ||
	    crem_put_counters(msg, CREM_A_FLOW_STATS, fi->counters))
		return -EMSGSIZE;
	nla_nest_end(msg, nest);
	return 0;
}

/* cb->args[0]: flows already sent (by position in the table's list). */
int crem_nl_flow_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct crem_net *cn = crem_net(sock_net(skb->sk));
	struct crem_flows *t = &cn->flows;
	struct crem_flow_info *fi;
	struct crem_flow *f;
	long i = 0, skip = cb->args[0];
	int err = 0;
	void *hdr;

	fi = kmalloc(sizeof(*fi), GFP_KERNEL);
	if (!fi)
		return -ENOMEM;
	rcu_read_lock();
	cb->seq = READ_ONCE(t->gen);
	list_for_each_entry_rcu(f, &t->list, all) {
		if (i++ < skip)
			continue;
		hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid, cb->nlh->nlmsg_seq,
				  &crem_nl_family, NLM_F_MULTI, CREM_CMD_FLOW_GET);
		if (!hdr) {
			i--;
			break;
		}
		genl_dump_check_consistent(cb, hdr);
		if (crem_put_flow(skb, f, fi)) {
			genlmsg_cancel(skb, hdr);
			i--;
			err = i == skip ? -EMSGSIZE : 0;
			break;
		}
		genlmsg_end(skb, hdr);
	}
	rcu_read_unlock();
	kfree(fi);
	cb->args[0] = i;
	return err ?: skb->len;
}
