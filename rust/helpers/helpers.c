// SPDX-License-Identifier: GPL-2.0
/*
 * Static inlines and macros for the module's Rust (see helpers.h): each
 * wrapper is one call or one field access, nothing more.
 */
#include <linux/bottom_half.h>
#include <linux/sched/mm.h>
#include <linux/netfilter.h>
#include <net/dst.h>
#include <net/netfilter/nf_conntrack.h>
#include <net/gso.h>
#include <linux/netfilter_bridge.h>
#include <linux/etherdevice.h>
#include <net/udp_tunnel.h>
#include <linux/rtnetlink.h>
#include <net/netns/generic.h>
#include <linux/moduleparam.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/jhash.h>
#include <net/ipv6.h>
#include <net/ipv6_stubs.h>
#include <net/ip6_fib.h>
#include <linux/module.h>
#include <linux/tracepoint.h>
/* The kernel's skb events, declared only: before CREATE_TRACE_POINTS below,
 * which defines this module's own events (crem_trace.h), not these. */
#include <trace/events/skb.h>
#include "helpers.h"

/* The 16 octets at @a (an IPv4 address mapped, ::ffff:a.b.c.d) as the
 * struct sockaddr_in or sockaddr_in6 %pISc prints, at @to
 * (sizeof(struct sockaddr_in6) octets of a trace entry: crem_trace.h's
 * TP_fast_assign, compiled here).
 * Built aside and copied: neither pointer need be aligned. */
static void crem_trace_sockaddr(u8 *to, const u8 *a)
{
	static const u8 mapped[12] = { [10] = 0xff, [11] = 0xff };
	union {
		struct sockaddr_in v4;
		struct sockaddr_in6 v6;
	} sa = {};

	if (!memcmp(a, mapped, sizeof(mapped))) {
		sa.v4.sin_family = AF_INET;
		memcpy(&sa.v4.sin_addr, a + sizeof(mapped), 4);
	} else {
		sa.v6.sin6_family = AF_INET6;
		memcpy(&sa.v6.sin6_addr, a, 16);
	}
	memcpy(to, &sa, sizeof(struct sockaddr_in6));
}

#define CREATE_TRACE_POINTS
#include "crem_trace.h"

/*
 * The module parameters: module_param is a macro, and the module! macro of
 * 6.12's Rust has none. Rust reads them (rust/collector.rs, rust/socket.rs).
 */

/* Seconds without packets or messages before a flow is removed; 0: never. */
unsigned int crem_flow_idle_s = 30;
module_param_named(flow_idle_s, crem_flow_idle_s, uint, 0644);
MODULE_PARM_DESC(flow_idle_s, "seconds a flow may stay idle before it is removed (0 = never)");

#ifdef CREM_TEST_BUILD
/* The test build's fault injection (rust/socket.rs). */
unsigned int crem_fault_corrupt_repair;
module_param_named(fault_corrupt_repair, crem_fault_corrupt_repair, uint, 0644);
MODULE_PARM_DESC(fault_corrupt_repair, "test only: corrupt every Nth coded REPAIR sent (0 = never)");

u32 crem_h_jhash2(const u32 *k, u32 length, u32 initval)
{
	return jhash2(k, length, initval);
}
#endif

#ifdef CONFIG_X86
void crem_h_kernel_fpu_begin(void)
{
	kernel_fpu_begin();
}

bool crem_h_boot_cpu_has(unsigned int feature)
{
	return boot_cpu_has(feature);
}
#endif

void crem_h_local_bh_disable(void)
{
	local_bh_disable();
}

void crem_h_local_bh_enable(void)
{
	local_bh_enable();
}

void crem_h_rcu_read_lock(void)
{
	rcu_read_lock();
}

void crem_h_rcu_read_unlock(void)
{
	rcu_read_unlock();
}

void *crem_h_kvzalloc_flow(size_t size)
{
	return kvzalloc(size, GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL | __GFP_NOWARN);
}

void *crem_h_kmemdup_atomic(const void *p, size_t len)
{
	return kmemdup(p, len, GFP_ATOMIC);
}

void crem_h_cond_resched(void)
{
	cond_resched();
}

void crem_h_init_work(struct work_struct *w, work_func_t f)
{
	INIT_WORK(w, f);
}

void crem_h_init_delayed_work(struct delayed_work *w, work_func_t f)
{
	INIT_DELAYED_WORK(w, f);
}

void *crem_h_memcg_of_current(void)
{
	return get_mem_cgroup_from_mm(current->mm);
}

void crem_h_memcg_put(void *m)
{
	mem_cgroup_put(m);
}

void *crem_h_set_active_memcg(void *m)
{
	return set_active_memcg(m);
}

void __percpu *crem_h_alloc_percpu(size_t size, size_t align)
{
	return __alloc_percpu(size, align);
}

void *crem_h_this_cpu_ptr(void __percpu *p)
{
	return this_cpu_ptr(p);
}

void *crem_h_per_cpu_ptr(void __percpu *p, unsigned int cpu)
{
	return per_cpu_ptr(p, cpu);
}

unsigned int crem_h_next_possible_cpu(int cpu)
{
	return cpumask_next(cpu, cpu_possible_mask);
}

unsigned int crem_h_nr_cpu_ids(void)
{
	return nr_cpu_ids;
}

unsigned char *crem_h_skb_data(const struct sk_buff *skb)
{
	return skb->data;
}

unsigned int crem_h_skb_len(const struct sk_buff *skb)
{
	return skb->len;
}

unsigned int crem_h_skb_headlen(const struct sk_buff *skb)
{
	return skb_headlen(skb);
}

unsigned int crem_h_skb_headroom(const struct sk_buff *skb)
{
	return skb_headroom(skb);
}

int crem_h_skb_tailroom(const struct sk_buff *skb)
{
	return skb_tailroom(skb);
}

int crem_h_skb_cloned(const struct sk_buff *skb)
{
	return skb_cloned(skb);
}

void crem_h_skb_reserve(struct sk_buff *skb, int len)
{
	skb_reserve(skb, len);
}

void crem_h_skb_reset_network_header(struct sk_buff *skb)
{
	skb_reset_network_header(skb);
}

void crem_h_skb_reset_transport_header(struct sk_buff *skb)
{
	skb_reset_transport_header(skb);
}

void crem_h_skb_reset_mac_header(struct sk_buff *skb)
{
	skb_reset_mac_header(skb);
}

bool crem_h_skb_mac_header_at_data(const struct sk_buff *skb, unsigned int mac_len)
{
	return skb_mac_header_was_set(skb) && skb_mac_header(skb) + mac_len == skb->data;
}

void crem_h_skb_set_mac_len(struct sk_buff *skb, u16 len)
{
	skb->mac_len = len;
}

int crem_h_skb_network_offset(const struct sk_buff *skb)
{
	return skb_network_offset(skb);
}

int crem_h_skb_transport_offset(const struct sk_buff *skb)
{
	return skb_transport_offset(skb);
}

__be16 crem_h_skb_protocol(const struct sk_buff *skb)
{
	return skb->protocol;
}

u32 crem_h_skb_mark(const struct sk_buff *skb)
{
	return skb->mark;
}

void crem_h_skb_set_protocol(struct sk_buff *skb, __be16 proto)
{
	skb->protocol = proto;
}

void crem_h_skb_set_mark(struct sk_buff *skb, u32 mark)
{
	skb->mark = mark;
}

void crem_h_skb_set_pkt_type(struct sk_buff *skb, u8 type)
{
	skb->pkt_type = type;
}

void crem_h_skb_set_csum_none(struct sk_buff *skb)
{
	skb->ip_summed = CHECKSUM_NONE;
}

struct net_device *crem_h_skb_dev(const struct sk_buff *skb)
{
	return skb->dev;
}

void crem_h_skb_set_dev(struct sk_buff *skb, struct net_device *dev)
{
	skb->dev = dev;
}

void crem_h_skb_set_iif(struct sk_buff *skb, int ifindex)
{
	skb->skb_iif = ifindex;
	IPCB(skb)->iif = ifindex;
}

bool crem_h_skb_has_dst(const struct sk_buff *skb)
{
	return skb_dst(skb);
}

void crem_h_skb_dst_force(struct sk_buff *skb)
{
	skb_dst_force(skb);
}

void crem_h_skb_dst_drop(struct sk_buff *skb)
{
	skb_dst_drop(skb);
}

void crem_h_nf_reset_ct(struct sk_buff *skb)
{
	nf_reset_ct(skb);
}

void crem_h_kfree_skb_reason(struct sk_buff *skb, enum skb_drop_reason reason)
{
	kfree_skb_reason(skb, reason);
}

const void *crem_h_skb_header_pointer(const struct sk_buff *skb, int off, int len, void *buf)
{
	return skb_header_pointer(skb, off, len, buf);
}

unsigned int crem_h_skb_gso_segs(const struct sk_buff *skb, unsigned int *size)
{
	const struct skb_shared_info *sh = skb_shinfo(skb);

	*size = sh->gso_size;
	/* A frag list's segments are skbs of their own, not at offsets. */
	return sh->gso_type & SKB_GSO_FRAGLIST ? 0 : sh->gso_segs;
}

bool crem_h_skb_is_gso(const struct sk_buff *skb)
{
	return skb_is_gso(skb);
}

int crem_h_skb_linearize(struct sk_buff *skb)
{
	return skb_linearize(skb);
}

bool crem_h_skb_bridged(const struct sk_buff *skb)
{
#if IS_ENABLED(CONFIG_BRIDGE_NETFILTER)
	return nf_bridge_info_exists(skb);
#else
	return false;
#endif
}

struct sk_buff *crem_h_skb_gso_segment(struct sk_buff *skb)
{
	struct sk_buff *segs = skb_gso_segment(skb, 0);

	return IS_ERR(segs) ? NULL : segs;
}

struct sk_buff *crem_h_skb_list_next(struct sk_buff *skb)
{
	return skb->next;
}

void crem_h_skb_mark_not_on_list(struct sk_buff *skb)
{
	skb_mark_not_on_list(skb);
}

const unsigned char *crem_h_skb_eth_source(const struct sk_buff *skb)
{
	return skb_mac_header_was_set(skb) && skb_mac_header_len(skb) >= ETH_HLEN ?
		       eth_hdr(skb)->h_source : NULL;
}

void crem_h_skb_queue_head_init(struct sk_buff_head *q)
{
	__skb_queue_head_init(q);
}

bool crem_h_skb_queue_empty(const struct sk_buff_head *q)
{
	return skb_queue_empty(q);
}

int crem_h_nf_okfn(const void *state, struct sk_buff *skb)
{
	const struct nf_hook_state *s = state;

	return s->okfn(s->net, s->sk, skb);
}

u8 crem_h_nf_pf(const void *state)
{
	return ((const struct nf_hook_state *)state)->pf;
}

struct net *crem_h_nf_net(const void *state)
{
	return ((const struct nf_hook_state *)state)->net;
}

unsigned int crem_h_dev_mtu(const struct net_device *dev)
{
	return READ_ONCE(dev->mtu);
}

int crem_h_dev_ifindex(const struct net_device *dev)
{
	return dev->ifindex;
}

unsigned short crem_h_dev_type(const struct net_device *dev)
{
	return dev->type;
}

const unsigned char *crem_h_dev_addr(const struct net_device *dev)
{
	return dev->dev_addr;
}

unsigned int crem_h_skb_rt_type(const struct sk_buff *skb)
{
	return skb_rtable(skb)->rt_type;
}

/* dst_input without its INDIRECT_CALL, whose targets a module cannot name. */
int crem_h_dst_input(struct sk_buff *skb)
{
	return READ_ONCE(skb_dst(skb)->input)(skb);
}

int crem_h_dst_output(struct net *net, struct sk_buff *skb)
{
	return dst_output(net, NULL, skb);
}

int crem_h_nf_hook_ipv4_prerouting(struct net *net, struct sk_buff *skb, struct net_device *in,
				   crem_h_okfn okfn)
{
	return NF_HOOK(NFPROTO_IPV4, NF_INET_PRE_ROUTING, net, NULL, skb, in, NULL, okfn);
}

void crem_h_skb_set_iif6(struct sk_buff *skb, int ifindex)
{
	skb->skb_iif = ifindex;
#if IS_ENABLED(CONFIG_IPV6)
	memset(IP6CB(skb), 0, sizeof(*IP6CB(skb)));
	IP6CB(skb)->iif = ifindex;
	IP6CB(skb)->nhoff = offsetof(struct ipv6hdr, nexthdr);
#endif
}

int crem_h_nf_hook_ipv6_prerouting(struct net *net, struct sk_buff *skb, struct net_device *in,
				   crem_h_okfn okfn)
{
	return NF_HOOK(NFPROTO_IPV6, NF_INET_PRE_ROUTING, net, NULL, skb, in, NULL, okfn);
}

int crem_h_ipv6_route_input(struct sk_buff *skb)
{
#if IS_ENABLED(CONFIG_IPV6)
	return ipv6_stub->ipv6_route_input(skb);
#else
	return -EAFNOSUPPORT;
#endif
}

bool crem_h_skb_rt6_forwards(const struct sk_buff *skb)
{
#if IS_ENABLED(CONFIG_IPV6)
	const struct rt6_info *rt = dst_rt6_info(skb_dst(skb));

	return !(rt->rt6i_flags & (RTF_LOCAL | RTF_ANYCAST | RTF_REJECT));
#else
	return false;
#endif
}

int crem_h_udp_sock_create4(struct net *net, __be16 port, struct socket **sockp)
{
	struct udp_port_cfg cfg = { .family = AF_INET, .local_udp_port = port };

	return udp_sock_create(net, &cfg, sockp);
}

int crem_h_udp_sock_create6(struct net *net, __be16 port, struct socket **sockp)
{
#if IS_ENABLED(CONFIG_IPV6)
	/* IPv6 only: IPv4 has a socket of its own. Checksums both ways, as
	 * RFC 8200 asks of UDP over IPv6 (peers always send them). */
	struct udp_port_cfg cfg = { .family = AF_INET6, .local_udp_port = port,
				    .ipv6_v6only = 1, .use_udp6_tx_checksums = 1,
				    .use_udp6_rx_checksums = 1 };

	return udp_sock_create6(net, &cfg, sockp);
#else
	return -EAFNOSUPPORT;
#endif
}

int crem_h_udp6_xmit(struct net *net, struct sock *sk, struct sk_buff *skb,
		     const struct in6_addr *daddr, __be16 sport, __be16 dport, u8 tclass)
{
#if IS_ENABLED(CONFIG_IPV6)
	struct flowi6 fl6 = { .daddr = *daddr, .flowi6_proto = IPPROTO_UDP,
			      .fl6_sport = sport, .fl6_dport = dport };
	/* Routes and picks the source address (fl6.saddr). */
	struct dst_entry *dst = ip6_dst_lookup_flow(net, sk, &fl6, NULL);

	if (IS_ERR(dst)) {
		kfree_skb_reason(skb, SKB_DROP_REASON_IP_OUTNOROUTES);
		return PTR_ERR(dst);
	}
	/* As IPv4's df=0: a message above the path MTU is fragmented here,
	 * not refused (udp_tunnel6_xmit_skb leaves ignore_df as it is). */
	skb->ignore_df = 1;
	udp_tunnel6_xmit_skb(dst, sk, skb, NULL, &fl6.saddr, daddr, tclass,
			     ip6_dst_hoplimit(dst), 0, sport, dport, false);
	return 0;
#else
	kfree_skb_reason(skb, SKB_DROP_REASON_IP_OUTNOROUTES);
	return -EAFNOSUPPORT;
#endif
}

void crem_h_setup_udp_tunnel_sock(struct net *net, struct socket *sock, void *user_data,
				  crem_h_encap_rcv rcv)
{
	struct udp_tunnel_sock_cfg cfg = { .sk_user_data = user_data, .encap_type = 1,
					   .encap_rcv = rcv };

	setup_udp_tunnel_sock(net, sock, &cfg);
}

void *crem_h_sk_user_data(const struct sock *sk)
{
	return rcu_dereference_sk_user_data(sk);
}

void crem_h_sk_clear_user_data(struct sock *sk)
{
	rcu_assign_sk_user_data(sk, NULL);
}

__be16 crem_h_socket_sport(const struct socket *sock)
{
	return inet_sk(sock->sk)->inet_sport;
}

struct sock *crem_h_socket_sk(const struct socket *sock)
{
	return sock->sk;
}

struct rtable *crem_h_route_output_udp(struct net *net, __be32 daddr, __be16 sport,
				       __be16 dport, __be32 *saddr, int *err)
{
	struct flowi4 fl4 = { .daddr = daddr, .flowi4_proto = IPPROTO_UDP,
			      .fl4_sport = sport, .fl4_dport = dport };
	struct rtable *rt = ip_route_output_key(net, &fl4);

	*err = PTR_ERR_OR_ZERO(rt);
	*saddr = fl4.saddr;
	return IS_ERR(rt) ? NULL : rt;
}

u8 crem_h_rt_hoplimit(struct rtable *rt)
{
	return ip4_dst_hoplimit(&rt->dst);
}

unsigned int crem_h_route_mtu4(struct net *net, __be32 daddr, int *ifindex)
{
	struct flowi4 fl4 = { .daddr = daddr, .flowi4_proto = IPPROTO_UDP };
	struct rtable *rt = ip_route_output_key(net, &fl4);
	unsigned int mtu;

	if (IS_ERR(rt))
		return 0;
	mtu = dst_mtu(&rt->dst);
	if (ifindex)
		*ifindex = rt->dst.dev ? rt->dst.dev->ifindex : 0;
	ip_rt_put(rt);
	return mtu;
}

unsigned int crem_h_route_mtu6(struct net *net, const struct in6_addr *daddr, int *ifindex)
{
#if IS_ENABLED(CONFIG_IPV6)
	struct flowi6 fl6 = { .daddr = *daddr, .flowi6_proto = IPPROTO_UDP };
	/* Never NULL: a failed lookup is a dst with its error set. */
	struct dst_entry *dst = ip6_route_output(net, NULL, &fl6);
	unsigned int mtu = dst->error ? 0 : dst_mtu(dst);

	if (ifindex && mtu)
		*ifindex = dst->dev ? dst->dev->ifindex : 0;
	dst_release(dst);
	return mtu;
#else
	return 0;
#endif
}

/*
 * The Path Reporter's drop probe (rust/report.rs): on the kernel's drop
 * tracepoint, with its exact prototype (register_trace_kfree_skb checks
 * it). The reasons' causes are Rust's (crem_drop_cause).
 */
int crem_drop_cause(enum skb_drop_reason reason);
void crem_report_drop(void *reporter, struct net *net, struct sk_buff *skb, int cause);

static void crem_drop_probe(void *data, struct sk_buff *skb, void *location,
			    enum skb_drop_reason reason, struct sock *rx_sk)
{
	int cause = crem_drop_cause(reason);

	/* The reason first: it is all that may be read of most dropped skbs
	 * (a socket's queued one keeps other data where ->dev is,
	 * udp's dev_scratch), and this probe sees every drop there is.
	 * This module's own drops (a CRF's, a CSF's) are not the path's. */
	if (cause < 0 || within_module((unsigned long)location, THIS_MODULE))
		return;
	/* No device: no netns to tell whose drop it is. */
	if (!skb->dev)
		return;
	/* With interrupts off the reporter's BH lock cannot be taken: the
	 * drop is counted, not recorded. */
	if (irqs_disabled() || in_hardirq())
		cause = -1;
	crem_report_drop(data, dev_net(skb->dev), skb, cause);
}

int crem_h_drop_probe_register(void *data)
{
	/* The probe takes a spinlock with preemption off (the tracepoint's):
	 * a sleeping lock on PREEMPT_RT. */
	if (IS_ENABLED(CONFIG_PREEMPT_RT))
		return -EOPNOTSUPP;
	return register_trace_kfree_skb(crem_drop_probe, data);
}

void crem_h_drop_probe_unregister(void *data)
{
	unregister_trace_kfree_skb(crem_drop_probe, data);
	/* No probe runs with @data once this returns. */
	tracepoint_synchronize_unregister();
}

u64 crem_h_net_cookie(const struct net *net)
{
	return net->net_cookie;
}

void *crem_h_net_generic(const struct net *net, unsigned int id)
{
	return net_generic(net, id);
}

bool crem_h_net_other_userns(const struct net *net)
{
	return net->user_ns != &init_user_ns;
}

struct net *crem_h_net_next(struct net *net)
{
	struct list_head *p = net ? net->list.next : net_namespace_list.next;

	return p == &net_namespace_list ? NULL : list_entry(p, struct net, list);
}

const u8 *crem_h_skb_network_header(const struct sk_buff *skb)
{
	return skb_network_header(skb);
}

void crem_h_skb_queue_tail(struct sk_buff_head *q, struct sk_buff *skb)
{
	__skb_queue_tail(q, skb);
}

struct sk_buff *crem_h_skb_dequeue(struct sk_buff_head *q)
{
	return __skb_dequeue(q);
}

void crem_h_trace_flow_up(const struct crem_trace_key *k, const u8 *peer)
{
	trace_crem_flow_up(k, peer, -1);
}

void crem_h_trace_flow_down(const struct crem_trace_key *k, const u8 *peer, int close)
{
	trace_crem_flow_down(k, peer, close);
}

void crem_h_trace_flow_change(const struct crem_trace_key *k, u32 event, u16 reason)
{
	trace_crem_flow_change(k, event, reason);
}

void crem_h_trace_config(const struct crem_trace_key *k, u8 id, u8 scheme, u8 fk, u8 fm, u16 t)
{
	trace_crem_config(k, id, scheme, fk, fm, t);
}

void crem_h_trace_restore(const struct crem_trace_key *k, u32 psn, bool held, bool ok)
{
	trace_crem_restore(k, psn, held, ok);
}

bool crem_h_trace_request_enabled(void)
{
	return trace_crem_request_enabled();
}

void crem_h_trace_request(const struct crem_trace_key *k, bool ranges, bool fallback, u32 first,
			  u8 fk, u8 lost)
{
	trace_crem_request(k, ranges, fallback, first, fk, lost);
}

const u8 crem_h_genl_mcast_cap_net_admin = GENL_MCAST_CAP_NET_ADMIN;

struct sk_buff *crem_h_genlmsg_new(size_t payload, gfp_t gfp)
{
	return genlmsg_new(payload, gfp);
}

size_t crem_h_nlmsg_goodsize(void)
{
	return NLMSG_GOODSIZE;
}

void crem_h_nlmsg_free(struct sk_buff *skb)
{
	nlmsg_free(skb);
}

void *crem_h_genlmsg_iput(struct sk_buff *skb, const struct genl_info *info)
{
	return genlmsg_iput(skb, info);
}

void crem_h_genlmsg_end(struct sk_buff *skb, void *hdr)
{
	genlmsg_end(skb, hdr);
}

void crem_h_genlmsg_cancel(struct sk_buff *skb, void *hdr)
{
	genlmsg_cancel(skb, hdr);
}

int crem_h_genlmsg_reply(struct sk_buff *skb, struct genl_info *info)
{
	return genlmsg_reply(skb, info);
}

int crem_h_genlmsg_multicast_netns(const struct genl_family *f, struct net *net,
				   struct sk_buff *skb, u32 group, gfp_t gfp)
{
	return genlmsg_multicast_netns(f, net, skb, 0, group, gfp);
}

bool crem_h_genl_has_listeners(const struct genl_family *f, struct net *net, u32 group)
{
	return genl_has_listeners(f, net, group);
}

void *crem_h_genlmsg_put_dump(struct sk_buff *skb, struct netlink_callback *cb,
			      const struct genl_family *f, u8 cmd)
{
	void *hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid, cb->nlh->nlmsg_seq, f,
				NLM_F_MULTI, cmd);

	if (hdr)
		genl_dump_check_consistent(cb, hdr);
	return hdr;
}

struct net *crem_h_genl_info_net(const struct genl_info *info)
{
	return genl_info_net(info);
}

struct nlattr **crem_h_genl_info_attrs(const struct genl_info *info)
{
	return info->attrs;
}

const struct nlattr *crem_h_genl_info_payload(const struct genl_info *info, int *len)
{
	/* The family has no user header: the attributes follow genlmsghdr. */
	*len = genlmsg_len(info->genlhdr);
	return genlmsg_data(info->genlhdr);
}

struct netlink_ext_ack *crem_h_genl_info_extack(const struct genl_info *info)
{
	return info->extack;
}

struct net *crem_h_skb_sock_net(const struct sk_buff *skb)
{
	return sock_net(skb->sk);
}

bool crem_h_netlink_net_capable(const struct sk_buff *skb, const struct net *net, int cap)
{
	return netlink_ns_capable(skb, net->user_ns, cap);
}

int crem_h_nla_parse_nested(struct nlattr **tb, int max, const struct nlattr *nla,
			    const struct nla_policy *policy, struct netlink_ext_ack *extack)
{
	return nla_parse_nested(tb, max, nla, policy, extack);
}

struct nlattr *crem_h_nla_nest_start(struct sk_buff *skb, int type)
{
	return nla_nest_start(skb, type);
}

void crem_h_nla_nest_end(struct sk_buff *skb, struct nlattr *start)
{
	nla_nest_end(skb, start);
}

void crem_h_nla_nest_cancel(struct sk_buff *skb, struct nlattr *start)
{
	nla_nest_cancel(skb, start);
}

void crem_h_extack_msg(struct netlink_ext_ack *extack, const char *msg, const struct nlattr *bad)
{
	do_trace_netlink_extack(msg);
	if (extack)
		extack->_msg = msg;
	if (bad)
		NL_SET_BAD_ATTR(extack, bad);
}

void crem_h_extack_fmt(struct netlink_ext_ack *extack, const char *text, const struct nlattr *bad)
{
	NL_SET_ERR_MSG_FMT(extack, "%s", text);
	if (bad)
		NL_SET_BAD_ATTR(extack, bad);
}

void crem_h_extack_miss(struct netlink_ext_ack *extack, const struct nlattr *nest, u32 type)
{
	NL_SET_ERR_ATTR_MISS(extack, nest, type);
}

struct net_device *crem_h_netdev_notifier_info_to_dev(void *info)
{
	return netdev_notifier_info_to_dev(info);
}

struct net *crem_h_dev_net(const struct net_device *dev)
{
	return dev_net(dev);
}

void crem_h_assert_rtnl(void)
{
	ASSERT_RTNL();
}
