#!/bin/sh
# Wonder Shaper style egress shaping (the classic HTB version of wondershaper,
# https://github.com/magnific0/wondershaper): three classes under one root class,
# interactive traffic first, bulk last. The ingress policing of the original is left
# out (linkshare shapes departures).

DEV=eth0
UPLINK=1000   # kbit/s

tc qdisc del dev $DEV root 2> /dev/null > /dev/null

tc qdisc add dev $DEV root handle 1: htb default 20

# The link, shaped a little below the modem's rate so that the queue stays here.
tc class add dev $DEV parent 1: classid 1:1 htb rate ${UPLINK}kbit burst 6k

# High priority: interactive, ACKs, DNS.
tc class add dev $DEV parent 1:1 classid 1:10 htb rate ${UPLINK}kbit burst 6k prio 1
# Default.
tc class add dev $DEV parent 1:1 classid 1:20 htb rate 900kbit ceil ${UPLINK}kbit burst 6k prio 2
# Bulk: what the user names as such.
tc class add dev $DEV parent 1:1 classid 1:30 htb rate 800kbit ceil 900kbit burst 6k prio 2

tc qdisc add dev $DEV parent 1:10 handle 10: pfifo limit 100
tc qdisc add dev $DEV parent 1:20 handle 20: pfifo limit 100
tc qdisc add dev $DEV parent 1:30 handle 30: pfifo limit 100

# TOS Minimum Delay (ssh, not scp) and ICMP in 1:10.
tc filter add dev $DEV parent 1:0 protocol ip prio 10 u32 \
    match ip tos 0x10 0xff flowid 1:10
tc filter add dev $DEV parent 1:0 protocol ip prio 10 u32 \
    match ip protocol 1 0xff flowid 1:10
# DNS.
tc filter add dev $DEV parent 1:0 protocol ip prio 11 u32 \
    match ip protocol 17 0xff match ip dport 53 0xffff flowid 1:10
# Bulk to a backup host and from a low-priority port range.
tc filter add dev $DEV parent 1:0 protocol ip prio 18 u32 \
    match ip dst 192.0.2.10/32 flowid 1:30
tc filter add dev $DEV parent 1:0 protocol ip prio 18 u32 \
    match ip sport 4096 0xf000 flowid 1:30
