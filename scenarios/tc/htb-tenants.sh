#!/bin/sh
# Two tenants and a shared service on a 100 Mbit/s uplink, the way hosting providers
# publish their HTB setups: each tenant assured 30 Mbit/s (split 10/20 between its two
# services), the shared service 40 Mbit/s, everyone allowed to borrow up to the whole
# link. The shape of the HLS paper's Experiment 2 (variant M), so that the kernel, the
# shaper and the simulator can be compared on it: `crates/cli/tests/shape.rs` builds
# this script with the real tc beside `linkshare shape` on the imported scenario.

DEV=eth0
LINK=100mbit

tc qdisc del dev $DEV root 2>/dev/null
tc qdisc add dev $DEV root handle 1: htb default 12

tc class add dev $DEV parent 1: classid 1:1 htb rate $LINK ceil $LINK

# Tenant A.
tc class add dev $DEV parent 1:1 classid 1:10 htb rate 30mbit ceil $LINK
tc class add dev $DEV parent 1:10 classid 1:11 htb rate 10mbit ceil $LINK
tc class add dev $DEV parent 1:10 classid 1:12 htb rate 20mbit ceil $LINK
# Tenant B.
tc class add dev $DEV parent 1:1 classid 1:20 htb rate 30mbit ceil $LINK
tc class add dev $DEV parent 1:20 classid 1:21 htb rate 10mbit ceil $LINK
tc class add dev $DEV parent 1:20 classid 1:22 htb rate 20mbit ceil $LINK
# The shared service.
tc class add dev $DEV parent 1:1 classid 1:30 htb rate 40mbit ceil $LINK

tc qdisc add dev $DEV parent 1:11 handle 11: pfifo limit 1000
tc qdisc add dev $DEV parent 1:12 handle 12: pfifo limit 1000
tc qdisc add dev $DEV parent 1:21 handle 21: pfifo limit 1000
tc qdisc add dev $DEV parent 1:22 handle 22: pfifo limit 1000
tc qdisc add dev $DEV parent 1:30 handle 30: pfifo limit 1000

tc filter add dev $DEV parent 1: protocol ip prio 1 u32 match ip protocol 17 0xff match ip dport 5201 0xffff flowid 1:11
tc filter add dev $DEV parent 1: protocol ip prio 1 u32 match ip protocol 17 0xff match ip dport 5202 0xffff flowid 1:22
tc filter add dev $DEV parent 1: protocol ip prio 1 u32 match ip protocol 17 0xff match ip dport 5203 0xffff flowid 1:30
