// SPDX-License-Identifier: GPL-2.0
/*
 * C registrations of crem.ko: per-netns state, netfilter hooks, the "crem"
 * generic netlink family. See crem_glue.h for why this half is C.
 */
#include <linux/module.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <linux/skbuff.h>
#include <linux/netfilter.h>
#include <linux/netfilter_ipv4.h>
#include <linux/netfilter_ipv6.h>
#include <net/net_namespace.h>
#include <net/netns/generic.h>
#include <net/genetlink.h>
#include <net/ipv6.h>
#include "crem_glue.h"

#define ROCEV2_UDP_PORT 4791
/* IPv6 header + UDP + BTH + RETH: everything classification needs. */
#define CREM_HDR_PEEK (40 + 8 + 12 + 16)

struct crem_net {
	void *rs; /* Rust per-netns state (rust/netns.rs) */
};

static unsigned int crem_net_id __read_mostly;

static inline void *crem_state(const struct net *net)
{
	return ((struct crem_net *)net_generic(net, crem_net_id))->rs;
}

/*
 * Cheap filter in C so that non-RoCEv2 traffic costs a few loads: only UDP to
 * port 4791 reaches Rust, with its leading bytes copied out of the skb.
 */
static unsigned int crem_nf_hook(void *priv, struct sk_buff *skb,
				 const struct nf_hook_state *state)
{
	u8 buf[CREM_HDR_PEEK];
	const u8 *hdr;
	struct udphdr _uh;
	const struct udphdr *uh;
	unsigned int l4off, peek;
	u32 hook = (uintptr_t)priv;

	if (state->pf == NFPROTO_IPV4) {
		const struct iphdr *iph = ip_hdr(skb);

		if (iph->protocol != IPPROTO_UDP || ip_is_fragment(iph))
			return NF_ACCEPT;
		l4off = skb_network_offset(skb) + iph->ihl * 4;
	} else {
		const struct ipv6hdr *ip6h = ipv6_hdr(skb);

		/* RoCEv2 over IPv6 carries no extension headers in practice. */
		if (ip6h->nexthdr != IPPROTO_UDP)
			return NF_ACCEPT;
		l4off = skb_network_offset(skb) + sizeof(*ip6h);
	}
	uh = skb_header_pointer(skb, l4off, sizeof(_uh), &_uh);
	if (!uh || uh->dest != htons(ROCEV2_UDP_PORT))
		return NF_ACCEPT;

	peek = min_t(unsigned int, skb->len - skb_network_offset(skb), sizeof(buf));
	hdr = skb_header_pointer(skb, skb_network_offset(skb), peek, buf);
	if (!hdr)
		return NF_ACCEPT;
	return crem_rs_roce_packet(crem_state(state->net), hook, state->pf, hdr,
				   peek, skb->len - skb_network_offset(skb));
}

#define CREM_HOOK(pf_, num_, which_, prio_)                                    \
	{ .hook = crem_nf_hook, .pf = (pf_), .hooknum = (num_),                \
	  .priority = (prio_), .priv = (void *)(uintptr_t)(which_) }

/* Late on the way in (after filtering), early on the way out. */
static const struct nf_hook_ops crem_nf_ops[] = {
	CREM_HOOK(NFPROTO_IPV4, NF_INET_LOCAL_IN, CREM_HOOK_LOCAL_IN, NF_IP_PRI_LAST - 1),
	CREM_HOOK(NFPROTO_IPV4, NF_INET_FORWARD, CREM_HOOK_FORWARD, NF_IP_PRI_LAST - 1),
	CREM_HOOK(NFPROTO_IPV4, NF_INET_LOCAL_OUT, CREM_HOOK_LOCAL_OUT, NF_IP_PRI_FIRST + 1),
	CREM_HOOK(NFPROTO_IPV6, NF_INET_LOCAL_IN, CREM_HOOK_LOCAL_IN, NF_IP6_PRI_LAST - 1),
	CREM_HOOK(NFPROTO_IPV6, NF_INET_FORWARD, CREM_HOOK_FORWARD, NF_IP6_PRI_LAST - 1),
	CREM_HOOK(NFPROTO_IPV6, NF_INET_LOCAL_OUT, CREM_HOOK_LOCAL_OUT, NF_IP6_PRI_FIRST + 1),
};

static int __net_init crem_net_init(struct net *net)
{
	struct crem_net *cn = net_generic(net, crem_net_id);
	int err;

	cn->rs = crem_rs_net_init(net);
	if (!cn->rs)
		return -ENOMEM;
	err = nf_register_net_hooks(net, crem_nf_ops, ARRAY_SIZE(crem_nf_ops));
	if (err) {
		crem_rs_net_exit(cn->rs);
		cn->rs = NULL;
	}
	return err;
}

static void __net_exit crem_net_exit(struct net *net)
{
	struct crem_net *cn = net_generic(net, crem_net_id);

	nf_unregister_net_hooks(net, crem_nf_ops, ARRAY_SIZE(crem_nf_ops));
	/* Hooks run under RCU: wait for those in flight before freeing state. */
	synchronize_net();
	crem_rs_net_exit(cn->rs);
	cn->rs = NULL;
}

static struct pernet_operations crem_net_ops = {
	.init = crem_net_init,
	.exit = crem_net_exit,
	.id = &crem_net_id,
	.size = sizeof(struct crem_net),
};

/* ---- generic netlink (stub until the YNL-specified family lands) ---- */

enum {
	CREM_CMD_UNSPEC,
	CREM_CMD_GET_STATS,
	__CREM_CMD_MAX,
};

enum {
	CREM_A_UNSPEC,
	CREM_A_PAD,
	CREM_A_STATS, /* nest of u64 counters, attribute type = index + 1 */
	__CREM_A_MAX,
};
#define CREM_A_MAX (__CREM_A_MAX - 1)
#define CREM_MAX_STATS 32

static const struct nla_policy crem_policy[CREM_A_MAX + 1] = {
	[CREM_A_STATS] = { .type = NLA_NESTED },
};

static struct genl_family crem_genl_family;

static int crem_get_stats(struct sk_buff *skb, struct genl_info *info)
{
	u64 vals[CREM_MAX_STATS];
	struct sk_buff *msg;
	struct nlattr *nest;
	void *hdr;
	u32 i, n;

	n = crem_rs_stats(crem_state(genl_info_net(info)), vals, CREM_MAX_STATS);
	msg = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_put_reply(msg, info, &crem_genl_family, 0, CREM_CMD_GET_STATS);
	if (!hdr)
		goto nospace;
	nest = nla_nest_start(msg, CREM_A_STATS);
	if (!nest)
		goto nospace;
	for (i = 0; i < n; i++)
		if (nla_put_u64_64bit(msg, i + 1, vals[i], CREM_A_PAD))
			goto nospace;
	nla_nest_end(msg, nest);
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
nospace:
	nlmsg_free(msg);
	return -EMSGSIZE;
}

static const struct genl_small_ops crem_genl_ops[] = {
	{ .cmd = CREM_CMD_GET_STATS, .doit = crem_get_stats },
};

static struct genl_family crem_genl_family __ro_after_init = {
	.name = "crem",
	.version = 1,
	.maxattr = CREM_A_MAX,
	.policy = crem_policy,
	.netnsok = true,
	.module = THIS_MODULE,
	.small_ops = crem_genl_ops,
	.n_small_ops = ARRAY_SIZE(crem_genl_ops),
};

/* Registration order: per-netns state and hooks first, then the control plane
 * that reads them; unwound in reverse. */
int crem_glue_register(void)
{
	int err;

	err = register_pernet_subsys(&crem_net_ops);
	if (err)
		return err;
	err = genl_register_family(&crem_genl_family);
	if (err)
		unregister_pernet_subsys(&crem_net_ops);
	return err;
}

void crem_glue_unregister(void)
{
	genl_unregister_family(&crem_genl_family);
	unregister_pernet_subsys(&crem_net_ops);
}
