/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ping-pong.h -- the messages of the ping-pong examples (05 to 09), whose
 *                servers all play against ping-pong-client.c
 */

#ifndef EXAMPLE_PING_PONG_H
#define EXAMPLE_PING_PONG_H 1

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <librpma.h>

#define MSG_NAME_MAX 16
#define WAIT_MS	     10000 /* how long a side waits for the other */

enum msg_op {
	MSG_PING = 1, /* value: the server answers MSG_PONG with value + 1 */
	MSG_PONG = 2,
	MSG_STOP = 3, /* the client's last message; not answered */
};

/*
 * One message, in either direction. Both sides are assumed to run on the
 * same architecture: the fields travel in host byte order.
 */
struct msg {
	uint32_t op;		 /* enum msg_op */
	uint32_t round;		 /* counts the client's pings from 1 */
	uint64_t value;		 /* what the other side adds one to */
	char name[MSG_NAME_MAX]; /* the client's name, NUL-terminated */
};

static inline void report(const char *who, const char *call, int ret)
{
	int err = rpma_err_get_provider_error();

	if (ret == RPMA_E_PROVIDER && err)
		fprintf(stderr, "%s: %s failed: %s (%s)\n", who, call, rpma_err_2str(ret),
			strerror(err));
	else
		fprintf(stderr, "%s: %s failed: %s\n", who, call, rpma_err_2str(ret));
}

#endif /* EXAMPLE_PING_PONG_H */
