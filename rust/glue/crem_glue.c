// SPDX-License-Identifier: GPL-2.0
/*
 * C registrations of crem.ko: per-netns state and netfilter hooks, and the
 * module parameters. See crem_glue.h for why this half is C.
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
#include <net/ipv6.h>
#include "crem_glue.h"
#include "crem_flow.h"

static unsigned int crem_net_id __read_mostly;

/* Seconds without packets or messages before a flow is removed; 0: never. */
unsigned int crem_flow_idle_s = 30;
module_param_named(flow_idle_s, crem_flow_idle_s, uint, 0644);
MODULE_PARM_DESC(flow_idle_s, "seconds a flow may stay idle before it is removed (0 = never)");

#ifdef CREM_TEST_BUILD
/* The test build's fault injection (rust/socket.rs), a module parameter. */
unsigned int crem_fault_corrupt_repair;
module_param_named(fault_corrupt_repair, crem_fault_corrupt_repair, uint, 0644);
MODULE_PARM_DESC(fault_corrupt_repair, "test only: corrupt every Nth coded REPAIR sent (0 = never)");
#endif

struct crem_net *crem_net(const struct net *net)
{
	return net_generic(net, crem_net_id);
}

void *crem_glue_state(const struct net *net)
{
	return crem_net(net)->rs;
}

/* Every packet at our hooks: the datapath is Rust's (rust/hook.rs). */
unsigned int crem_nf_hook(void *priv, struct sk_buff *skb, const struct nf_hook_state *state)
{
	struct crem_net *cn = crem_net(state->net);

	return crem_rs_hook(cn->rs, (uintptr_t)priv, skb, state);
}

#define CREM_HOOK(pf_, num_, which_, prio_)                                    \
	{ .hook = crem_nf_hook, .pf = (pf_), .hooknum = (num_),                \
	  .priority = (prio_), .priv = (void *)(uintptr_t)(which_) }

/*
 * Last in every chain: on the way in after filtering, on the way out after
 * filtering and NAT, so the CSF codes only packets that do leave (and may
 * pass them on itself, see rust/hook.rs).
 */
static const struct nf_hook_ops crem_nf_ops[] = {
	CREM_HOOK(NFPROTO_IPV4, NF_INET_LOCAL_IN, CREM_HOOK_LOCAL_IN, NF_IP_PRI_LAST - 1),
	CREM_HOOK(NFPROTO_IPV4, NF_INET_FORWARD, CREM_HOOK_FORWARD, NF_IP_PRI_LAST - 1),
	CREM_HOOK(NFPROTO_IPV4, NF_INET_LOCAL_OUT, CREM_HOOK_LOCAL_OUT, NF_IP_PRI_LAST - 1),
	CREM_HOOK(NFPROTO_IPV6, NF_INET_LOCAL_IN, CREM_HOOK_LOCAL_IN, NF_IP6_PRI_LAST - 1),
	CREM_HOOK(NFPROTO_IPV6, NF_INET_FORWARD, CREM_HOOK_FORWARD, NF_IP6_PRI_LAST - 1),
	CREM_HOOK(NFPROTO_IPV6, NF_INET_LOCAL_OUT, CREM_HOOK_LOCAL_OUT, NF_IP6_PRI_LAST - 1),
};

static int __net_init crem_net_init(struct net *net)
{
	struct crem_net *cn = net_generic(net, crem_net_id);
	int err;

	cn->net = net;
	cn->rs = crem_rs_net_init(net, cn, cn->dp, cn->msg_in, cn->msg_out, &cn->mem);
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
	/* Its socket, flows, collector and event work go with its Rust state. */
	crem_rs_net_exit(cn->rs);
	cn->rs = NULL;
}

static struct pernet_operations crem_net_ops = {
	.init = crem_net_init,
	.exit = crem_net_exit,
	.id = &crem_net_id,
	.size = sizeof(struct crem_net),
};

/*
 * The per-netns state and its hooks; the netdevice notifier and the
 * genetlink family, which read that state, are registered after it and
 * unregistered before it by the Rust module (rust/crem_main.rs). A netns's
 * state outlives its devices: pernet exits run before the devices' own.
 */
int crem_glue_register(void)
{
	return register_pernet_subsys(&crem_net_ops);
}

void crem_glue_unregister(void)
{
	unregister_pernet_subsys(&crem_net_ops);
}
