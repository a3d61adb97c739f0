#!/bin/sh
# The shape of OpenWrt sqm-scripts' simple.qos egress: an HTB root class at the
# uplink's rate, three priority tiers below it by DSCP, each tier with an fq_codel
# leaf. linkshare's leaves are FIFO queues, so the fq_codel leaves are not translated
# (import with --partial: each class keeps the kernel's default pfifo). The ingress
# side (an ifb device with its own tree) is not part of this script.

IFACE=eth1
UPLINK=20000

tc qdisc del dev $IFACE root 2>/dev/null
tc qdisc add dev $IFACE root handle 1: htb default 12
tc class add dev $IFACE parent 1: classid 1:1 htb quantum 1514 rate ${UPLINK}kbit ceil ${UPLINK}kbit
tc class add dev $IFACE parent 1:1 classid 1:11 htb quantum 1514 rate 2000kbit ceil ${UPLINK}kbit prio 1
tc class add dev $IFACE parent 1:1 classid 1:12 htb quantum 1514 rate 5000kbit ceil ${UPLINK}kbit prio 2
tc class add dev $IFACE parent 1:1 classid 1:13 htb quantum 1514 rate 1000kbit ceil 19000kbit prio 3

tc qdisc add dev $IFACE parent 1:11 handle 110: fq_codel limit 1001 quantum 300 noecn
tc qdisc add dev $IFACE parent 1:12 handle 120: fq_codel limit 1001 quantum 300 noecn
tc qdisc add dev $IFACE parent 1:13 handle 130: fq_codel limit 1001 quantum 300 noecn

# Expedited forwarding and CS6/CS7 to the first tier, CS1 (background) to the last.
tc filter add dev $IFACE parent 1:0 protocol ip prio 1 u32 match ip dsfield 0xb8 0xfc classid 1:11
tc filter add dev $IFACE parent 1:0 protocol ip prio 2 u32 match ip dsfield 0xc0 0xc0 classid 1:11
tc filter add dev $IFACE parent 1:0 protocol ip prio 3 u32 match ip dsfield 0x20 0xfc classid 1:13
tc filter add dev $IFACE parent 1:0 protocol ipv6 prio 4 u32 match ip6 priority 0xb8 0xfc classid 1:11
tc filter add dev $IFACE parent 1:0 protocol ipv6 prio 5 u32 match ip6 priority 0x20 0xfc classid 1:13
