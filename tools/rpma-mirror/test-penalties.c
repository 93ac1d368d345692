/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test-penalties.c -- the per-source penalties of examples/common/psk.h, on
 *                     the host, with the clock given: when a source is
 *                     penalized and for how long, what a proof forgives,
 *                     that an IPv6 /64 is one source, which source is
 *                     forgotten when too many come, what counts toward a
 *                     penalty, and the reason the servers log
 *
 * Prints "ok N - what" or "not ok N - what" for each check (TAP), and
 * exits 1 when one failed.
 */

#include <arpa/inet.h>
#include <stdio.h>

#include "psk.h"

static int checks, failed;

static void check(bool ok, const char *what)
{
	printf("%sok %d - %s\n", ok ? "" : "not ", ++checks, what);
	failed += !ok;
}

/* 192.0.2.n as psk_ip16() gives it */
static void v4(uint8_t ip[16], int n)
{
	static const uint8_t mapped[16] = {
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 0, 2, 0
	};

	memcpy(ip, mapped, 16);
	ip[15] = (uint8_t)n;
}

/* 2001:db8:0:net::host */
static void v6(uint8_t ip[16], int net, int host)
{
	memset(ip, 0, 16);
	ip[0] = 0x20;
	ip[1] = 0x01;
	ip[2] = 0x0d;
	ip[3] = 0xb8;
	ip[6] = (uint8_t)(net >> 8);
	ip[7] = (uint8_t)net;
	ip[15] = (uint8_t)host;
}

/* n answers to ip at now; the penalty the last one started */
static uint32_t count_n(struct psk_penalties *p, const uint8_t ip[16], int n, uint64_t now)
{
	uint32_t ms = 0;

	for (int i = 0; i < n; i++)
		ms = psk_penalty_count(p, ip, now);
	return ms;
}

int main(void)
{
	static struct psk_penalties p;
	uint8_t a[16], b[16], c[16];
	uint32_t dropped = 99;
	uint64_t t = 1000000;

	v4(a, 101);
	v4(b, 1);
	check(count_n(&p, a, PSK_PENALTY_REFUSALS - 1, t) == 0, "9 answers start no penalty");
	check(!psk_penalized(&p, a, t, &dropped) && dropped == 0, "nor refuse the source");
	check(psk_penalty_count(&p, a, t) == PSK_PENALTY_FIRST_MS, "the 10th starts one of 10 s");
	check(psk_penalized(&p, a, t + 1, &dropped), "the source is refused unread");
	check(psk_penalized(&p, a, t + PSK_PENALTY_FIRST_MS - 1, &dropped), "until its end");
	check(!psk_penalized(&p, b, t + 2, &dropped), "another source is not");
	check(!psk_penalized(&p, a, t + PSK_PENALTY_FIRST_MS, &dropped) && dropped == 2,
	      "after it, the source comes in, told how many were refused unread");
	check(!psk_penalized(&p, a, t + PSK_PENALTY_FIRST_MS + 1, &dropped) && dropped == 0,
	      "which is told once");
	t += PSK_PENALTY_FIRST_MS + 2;
	check(count_n(&p, a, PSK_PENALTY_REFUSALS, t) == 2 * PSK_PENALTY_FIRST_MS,
	      "the next penalty lasts twice as long");
	for (int i = 0; i < 10; i++) {
		t += PSK_PENALTY_MAX_MS;
		psk_penalized(&p, a, t, &dropped);
		count_n(&p, a, PSK_PENALTY_REFUSALS, t);
	}
	t += PSK_PENALTY_MAX_MS;
	psk_penalized(&p, a, t, &dropped);
	check(count_n(&p, a, PSK_PENALTY_REFUSALS, t) == PSK_PENALTY_MAX_MS, "up to 5 minutes");

	/* answers spread wider than the window start nothing */
	uint32_t started = 0;

	v4(c, 7);
	for (int i = 0; i < 3 * PSK_PENALTY_REFUSALS; i++)
		started |= psk_penalty_count(&p, c, t + (uint64_t)i * 2000);
	check(started == 0, "30 answers 2 s apart never add up to a penalty");
	/* a proof forgives what was counted */
	v4(c, 8);
	count_n(&p, c, PSK_PENALTY_REFUSALS - 1, t);
	psk_penalty_forgive(&p, c);
	check(count_n(&p, c, PSK_PENALTY_REFUSALS - 1, t) == 0, "a proof forgives the count");

	/* one IPv6 /64 is one source; another /64 is another */
	v6(a, 1, 1);
	count_n(&p, a, PSK_PENALTY_REFUSALS, t);
	v6(b, 1, 77);
	v6(c, 2, 1);
	check(psk_penalized(&p, b, t, &dropped), "an IPv6 /64 is one source");
	check(!psk_penalized(&p, c, t, &dropped), "the next /64 is another");

	/* too many sources: the one seen least recently goes first, a penalized one last */
	static struct psk_penalties q;

	v4(a, 1);
	count_n(&q, a, PSK_PENALTY_REFUSALS, t);
	for (int i = 0; i < PSK_PENALTY_SOURCES + 10; i++) {
		v6(b, 1000 + i, 1);
		psk_penalty_count(&q, b, t + 1 + (uint64_t)i);
	}
	check(psk_penalized(&q, a, t + 1000, &dropped),
	      "a penalized source outlives 266 others that were refused once");
	v6(b, 1000, 1);
	check(psk_source_of(&q, b, false, t + 1000) == NULL, "the first of those is forgotten");
	v6(b, 1000 + PSK_PENALTY_SOURCES + 9, 1);
	check(psk_source_of(&q, b, false, t + 1000) != NULL, "the last one is remembered");

	/* what counts: an IP address no --penalty-exempt rule covers */
	struct sockaddr_storage ss;
	struct psk_allow rule;
	uint8_t ip[16];

	memset(&ss, 0, sizeof(ss));
	ss.ss_family = AF_INET;
	inet_pton(AF_INET, "192.0.2.101", &((struct sockaddr_in *)&ss)->sin_addr);
	v4(a, 101);
	check(psk_penalty_counts(NULL, 0, &ss, ip) && memcmp(ip, a, 16) == 0,
	      "with no exempt rule, an IPv4 source counts, as psk_ip16() gives it");
	check(psk_allow_parse("192.0.2.0/24", &rule) == 0 && !psk_penalty_counts(&rule, 1, &ss, ip),
	      "one an exempt rule covers does not");
	check(psk_allow_parse("198.51.100.0/24", &rule) == 0 &&
		  psk_penalty_counts(&rule, 1, &ss, ip),
	      "one no exempt rule covers does");
	ss.ss_family = AF_UNIX;
	check(!psk_penalty_counts(NULL, 0, &ss, ip), "a source without an IP address does not");

	char why[128];

	check(strcmp(psk_penalty_why(20000, why, sizeof(why)),
		     "10 answers but a connection within 10 s: its requests are refused unread "
		     "for 20 s") == 0,
	      "the servers log why, with the penalty's length");

	printf("1..%d\n", checks);
	return failed ? 1 : 0;
}
