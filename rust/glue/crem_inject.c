// SPDX-License-Identifier: GPL-2.0
/*
 * Restored and held packets go on toward the RDMA receiver.
 *
 * A held packet is an original stopped at our hook, the last of its chain:
 * in gateway mode it has passed PREROUTING, its input route and the FORWARD
 * rules, so it leaves by the route it has (dst_output); in host mode it
 * enters this host's receive path on the device the flow arrives on.
 *
 * A restored packet never crossed this node, so it takes the path its
 * original would have: in host mode the receive path of the device the
 * flow's packets arrive on (it passes LOCAL_IN again, where the CRF sees a
 * PSN it has already delivered: a duplicate, counted as such, let through);
 * in gateway mode the router's own path from that device on
 * (crem_forward_restored): PREROUTING, the input route (iif, tos and mark
 * rules), ip_forward (TTL, MTU, xfrm policy, the FORWARD chain) and the
 * output's POSTROUTING, so the operator's policy holds for it as for the
 * original (issue 12 item 10).
 *
 * A restored packet is rebuilt around its RoCEv2 UDP payload from the flow's
 * template (addresses, source port, DSCP, TTL and mark of its last packet);
 * UDP checksum 0 as RoCEv2 allows, and no ECN marking (the draft: "Restored
 * packets carry no ECN marking"; a CE of the lost original is not ours to
 * repeat, and the template's is another packet's). The caller fills in the
 * IPv4 Identification (solved from the ICRC) and the header checksum.
 */
#include <linux/ip.h>
#include <linux/udp.h>
#include <net/ip.h>
#include <net/route.h>
#include <linux/percpu.h>
#include <net/dst.h>
#include <net/inet_ecn.h>
#include <linux/netdevice.h>
#include <linux/etherdevice.h>
#include <linux/if_arp.h>
#include <linux/netfilter.h>
#include "crem_flow.h"

#define ROCEV2_UDP_PORT 4791

struct sk_buff *crem_build_restored(struct crem_flow *f, const u8 *p, u32 len)
{
	struct sk_buff *skb;
	struct udphdr *uh;
	struct iphdr *iph;
	u32 hlen = sizeof(*iph) + sizeof(*uh);

	skb = alloc_skb(LL_MAX_HEADER + hlen + len, GFP_ATOMIC);
	if (!skb)
		return NULL;
	skb_reserve(skb, LL_MAX_HEADER + hlen);
	skb_put_data(skb, p, len);
	uh = skb_push(skb, sizeof(*uh));
	skb_reset_transport_header(skb);
	uh->source = f->sport;
	uh->dest = htons(ROCEV2_UDP_PORT);
	uh->len = htons(sizeof(*uh) + len);
	uh->check = 0;
	iph = skb_push(skb, sizeof(*iph));
	skb_reset_network_header(skb);
	iph->version = 4;
	iph->ihl = 5;
	iph->tos = f->tos & ~INET_ECN_MASK;
	iph->tot_len = htons(hlen + len);
	iph->id = 0;
	iph->frag_off = f->frag_off;
	/*
	 * The template's TTL is read at our hook: in gateway mode (FORWARD)
	 * after this hop's decrement, which forwarding the restored packet
	 * applies again; in host mode (LOCAL_IN) as delivered.
	 */
	iph->ttl = f->host ? f->ttl : min_t(u32, f->ttl + 1, 255);
	iph->protocol = IPPROTO_UDP;
	iph->saddr = f->key.saddr;
	iph->daddr = f->key.daddr; /* id and checksum: crem_glue_crf_restored */
	skb->protocol = htons(ETH_P_IP);
	skb->ip_summed = CHECKSUM_NONE;
	skb->mark = f->mark;
	return skb;
}

/*
 * Host mode: @skb (network header at data) enters the receive path as if
 * @dev had received it, so it needs a link-layer header like any received
 * frame: packet taps (tcpdump, dhclient's LPF socket) push back to
 * skb_mac_header() before their filter, tc ingress and generic XDP read it.
 * A held original still has the one it arrived with; a restored packet gets
 * the header of the flow's last packet (its source MAC, our address, IPv4).
 */
static void crem_set_link_header(struct crem_flow *f, struct sk_buff *skb,
				 struct net_device *dev)
{
	struct ethhdr *eth;

	if (skb_mac_header_was_set(skb) && skb_mac_header(skb) + ETH_HLEN == skb->data) {
		/* As it arrived: only re-point data and type at it. */
		skb_push(skb, ETH_HLEN);
		skb->protocol = eth_type_trans(skb, dev);
		return;
	}
	if (dev->type != ARPHRD_ETHER || skb_headroom(skb) < ETH_HLEN) {
		/* No link header to make: an empty one (tap sees the IP header). */
		skb_reset_mac_header(skb);
		skb->mac_len = 0;
		skb->protocol = htons(ETH_P_IP);
		skb->pkt_type = PACKET_HOST;
		return;
	}
	eth = skb_push(skb, ETH_HLEN);
	ether_addr_copy(eth->h_dest, dev->dev_addr);
	ether_addr_copy(eth->h_source, f->h_source);
	eth->h_proto = htons(ETH_P_IP);
	skb->protocol = eth_type_trans(skb, dev);
}

static int crem_deliver_local(struct crem_flow *f, struct sk_buff *skb)
{
	struct net_device *dev;
	int err;

	rcu_read_lock();
	dev = dev_get_by_index_rcu(f->cn->net, f->ifindex);
	if (!dev) {
		rcu_read_unlock();
		kfree_skb_reason(skb, SKB_DROP_REASON_DEV_READY);
		return -ENODEV;
	}
	skb_dst_drop(skb);
	nf_reset_ct(skb);
	skb_reset_network_header(skb);
	skb->dev = dev;
	crem_set_link_header(f, skb, dev);
	/* eth_type_trans classed it by the MAC: it is ours either way. */
	skb->pkt_type = PACKET_HOST;
	err = netif_rx(skb) == NET_RX_SUCCESS ? 0 : -ENOBUFS;
	rcu_read_unlock();
	return err;
}

/*
 * The restored packet this CPU is forwarding (crem_forward_restored), which
 * our own FORWARD hook lets through untouched (crem_inject_own): the CRF
 * that restored it has delivered it already, and the flow's lock is held
 * meanwhile. Set and cleared around one synchronous pass with BH disabled,
 * so no other packet runs our hook on this CPU in between; a packet that a
 * hook queues (NFQUEUE) comes back later without the mark, and the CRF sees
 * a PSN it has delivered: a duplicate, let through.
 */
static DEFINE_PER_CPU(const struct sk_buff *, crem_fwd_skb);

bool crem_inject_own(const struct sk_buff *skb)
{
	return raw_cpu_read(crem_fwd_skb) == skb;
}

/* PREROUTING passed: the input route, then the forwarding path. */
static int crem_forward_route(struct net *net, struct sock *sk, struct sk_buff *skb)
{
	const struct iphdr *iph = ip_hdr(skb);
	int err;

	err = ip_route_input_noref(skb, iph->daddr, iph->saddr, iph->tos, skb->dev);
	if (err) {
		kfree_skb_reason(skb, err == -EXDEV ? SKB_DROP_REASON_IP_RPFILTER :
						      SKB_DROP_REASON_IP_INNOROUTES);
		return err;
	}
	/* The original crossed this router: anything but a forwarding route
	 * (the destination became local, broadcast) is not its path. */
	if (skb_rtable(skb)->rt_type != RTN_UNICAST) {
		kfree_skb_reason(skb, SKB_DROP_REASON_IP_INNOROUTES);
		return -EHOSTUNREACH;
	}
	/* ip_forward, or what the route says (dst_input without its
	 * INDIRECT_CALL, whose targets a module cannot name). */
	return READ_ONCE(skb_dst(skb)->input)(skb);
}

static int crem_forward_restored(struct crem_flow *f, struct sk_buff *skb)
{
	struct net *net = f->cn->net;
	struct net_device *dev;
	int err;

	DEBUG_NET_WARN_ON_ONCE(!in_softirq());
	rcu_read_lock();
	dev = dev_get_by_index_rcu(net, f->ifindex);
	if (!dev) {
		rcu_read_unlock();
		kfree_skb_reason(skb, SKB_DROP_REASON_DEV_READY);
		return -ENODEV;
	}
	skb->dev = dev;
	skb->skb_iif = dev->ifindex;
	IPCB(skb)->iif = dev->ifindex;
	skb->pkt_type = PACKET_HOST;
	__this_cpu_write(crem_fwd_skb, skb);
	err = NF_HOOK(NFPROTO_IPV4, NF_INET_PRE_ROUTING, net, NULL, skb, dev, NULL,
		      crem_forward_route);
	__this_cpu_write(crem_fwd_skb, NULL);
	rcu_read_unlock();
	return err;
}

/*
 * @skb goes on toward the RDMA receiver (see the top of this file). Called
 * with the flow's lock held, BH disabled. A gateway's restored packets are
 * the ones without a route: a held original keeps the route it arrived with
 * (crem_crf_packet holds only those that have one).
 */
void crem_inject(struct crem_flow *f, struct sk_buff *skb)
{
	int err;

	if (f->host)
		err = crem_deliver_local(f, skb);
	else if (!skb_dst(skb))
		err = crem_forward_restored(f, skb);
	else
		err = dst_output(f->cn->net, NULL, skb);
	if (err)
		f->ctr.inject_fail++;
	else
		f->ctr.injected++;
}
