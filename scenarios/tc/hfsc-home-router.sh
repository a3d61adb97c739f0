#!/bin/sh
# A typical HFSC home-router configuration (the shape of the HFSC examples that
# circulate for DSL uplinks): VoIP with a real-time curve that serves a 200-byte
# packet within 5 ms, interactive, web and bulk sharing the rest by link-sharing
# curves, the whole tree held to the uplink's rate by an upper limit.

DEV=wan0
tc qdisc del dev $DEV root 2>/dev/null || true
tc qdisc add dev $DEV root handle 1: hfsc default 40

tc class add dev $DEV parent 1: classid 1:1 hfsc sc rate 10mbit ul rate 10mbit

# VoIP: 200-byte packets within 5 ms, 500 kbit/s.
tc class add dev $DEV parent 1:1 classid 1:10 hfsc rt umax 200b dmax 5ms rate 500kbit ls rate 1mbit
# Interactive (ssh, games): a concave curve, 2 Mbit/s for 10 ms then 1 Mbit/s.
tc class add dev $DEV parent 1:1 classid 1:20 hfsc sc m1 2mbit d 10ms m2 1mbit
# Web.
tc class add dev $DEV parent 1:1 classid 1:30 hfsc ls rate 5mbit
# Bulk and everything else.
tc class add dev $DEV parent 1:1 classid 1:40 hfsc ls rate 3mbit

tc qdisc add dev $DEV parent 1:10 handle 10: pfifo limit 50
tc qdisc add dev $DEV parent 1:40 handle 40: bfifo limit 256kb

tc filter add dev $DEV parent 1: protocol ip prio 1 flower ip_proto udp dst_port 5060-5061 classid 1:10
tc filter add dev $DEV parent 1: protocol ip prio 2 flower ip_tos 0xb8/0xfc classid 1:10
tc filter add dev $DEV parent 1: protocol ip prio 3 flower ip_proto tcp dst_port 22 classid 1:20
tc filter add dev $DEV parent 1: protocol ipv6 prio 4 flower ip_proto tcp dst_port 443 classid 1:30
tc filter add dev $DEV parent 1: protocol ip prio 4 flower ip_proto tcp dst_port 443 classid 1:30
