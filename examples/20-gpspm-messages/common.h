/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * common.h -- what the server and the client of 20-gpspm-messages share:
 *             the records, the messages, and the two connections that
 *             go down together
 */

#ifndef EXAMPLE_GPSPM_MESSAGES_COMMON_H
#define EXAMPLE_GPSPM_MESSAGES_COMMON_H 1

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <librpma.h>

/*
 * The server's region: SLOTS slots of SLOT_SIZE bytes, used as a ring.
 * Record n (from 1) goes into slot (n - 1) % SLOTS; the client writes the
 * next record only after the server acknowledged this one, so a slot is
 * never written again before the server has looked at it.
 */
#define SLOT_SIZE   64
#define SLOTS	    256
#define REGION_SIZE (SLOT_SIZE * SLOTS)

/* GPSPM requests the server takes at a time (its receive queue, 255 at most) */
#define GPSPM_DEPTH 8

/*
 * The messages, text in MSG_SIZE bytes, NUL-terminated:
 *   client -> server  "record N": record N is persistent in your memory
 *   server -> client  "ack N":    it is there, byte for byte
 *   client -> server  "done N":   N records in all; both connections close next
 */
#define MSG_SIZE 32

#define WAIT_MS	      10000 /* how long a side waits for the other */
#define CLOSE_WAIT_MS 3000  /* how long a closing connection may take to say so */
#define PROGRESS      100   /* a line every so many records */

/*
 * The two connections a client makes, told apart by the first byte of the
 * private data of its connection request (rpma_conn_req_get_private_data()
 * on the server), not by their order alone: the server turns away a
 * request of the wrong kind, or one from a client it has no GPSPM
 * connection with.
 */
enum conn_kind {
	KIND_GPSPM = 'G',    /* writes and persistent flushes; the library's receive queue */
	KIND_MESSAGES = 'M', /* "record N" and "ack N"; the application's receive queue */
};

/*
 * The client's private data. Both sides are assumed to run on the same
 * architecture: the fields travel in host byte order.
 */
struct client_pdata {
	uint8_t kind; /* enum conn_kind */
	uint8_t reserved[3];
	uint32_t session; /* KIND_MESSAGES: what the server gave on the GPSPM connection */
};

/*
 * The server's private data on the GPSPM connection: the session that the
 * client's messages connection must name, then the versioned descriptors
 * of the region and of the peer configuration, each after its length.
 */
struct server_pdata {
	uint32_t session;
	uint8_t mr_desc_size;
	uint8_t pcfg_desc_size;
	uint8_t descriptors[];
};

#define PDATA_MAX 196

static inline void report(const char *who, const char *call, int ret)
{
	int err = rpma_err_get_provider_error();

	if (ret == RPMA_E_PROVIDER && err)
		fprintf(stderr, "%s: %s failed: %s (%s)\n", who, call, rpma_err_2str(ret),
			strerror(err));
	else
		fprintf(stderr, "%s: %s failed: %s\n", who, call, rpma_err_2str(ret));
}

/* record n as the client writes it and the server expects it, whole slot */
static inline void format_record(char *slot, uint32_t n)
{
	memset(slot, 0, SLOT_SIZE);
	snprintf(slot, SLOT_SIZE, "record %u, persistent before its message", n);
}

static inline size_t record_offset(uint32_t n)
{
	return (size_t)((n - 1) % SLOTS) * SLOT_SIZE;
}

/*
 * One of the two connections, and the two things that say it went down:
 * its events (RPMA_CONN_CLOSED, RPMA_CONN_LOST, on the descriptor of
 * rpma_conn_get_event_fd()) and its completions (an operation that
 * completes with an error, on the CQ's descriptor). Both descriptors are
 * made O_NONBLOCK: one poll() watches them all, and a wake-up with
 * nothing to take does not block.
 */
struct link {
	const char *who;  /* "server", "client" */
	const char *name; /* "GPSPM", "messages" */
	struct rpma_conn *conn;
	struct rpma_cq *cq; /* NULL: not the application's (RPMA_GPSPM_THREAD) */
	int ev_fd, cq_fd;   /* cq_fd: -1 without cq */
	bool down;	    /* its RPMA_CONN_CLOSED or RPMA_CONN_LOST came */
};

static inline int set_nonblock(int fd)
{
	int flags = fcntl(fd, F_GETFL);

	return flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) ? -1 : 0;
}

/* for an established connection; with_cq false: the CQ is the library's */
static inline int link_init(struct link *l, const char *who, const char *name,
			    struct rpma_conn *conn, bool with_cq)
{
	int ret;

	l->who = who;
	l->name = name;
	l->conn = conn;
	l->cq = NULL;
	l->cq_fd = -1;
	l->down = false;
	if ((ret = rpma_conn_get_event_fd(conn, &l->ev_fd)) ||
	    (with_cq && ((ret = rpma_conn_get_cq(conn, &l->cq)) ||
			 (ret = rpma_cq_get_fd(l->cq, &l->cq_fd))))) {
		report(who, "getting the descriptors", ret);
		return -1;
	}
	if (set_nonblock(l->ev_fd) || (l->cq_fd >= 0 && set_nonblock(l->cq_fd))) {
		fprintf(stderr, "%s: fcntl: %s\n", who, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * Takes the connection's pending events. 1: it went down (closed or lost;
 * *why says which), 0: it is up, -1: its events cannot be taken, which
 * is as good as down.
 */
static inline int link_event(struct link *l, const char **why)
{
	enum rpma_conn_event event;
	int ret;

	while ((ret = rpma_conn_next_event(l->conn, &event)) == 0) {
		if (event == RPMA_CONN_CLOSED || event == RPMA_CONN_LOST) {
			l->down = true;
			*why = event == RPMA_CONN_CLOSED ? "closed" : "lost";
			return 1;
		}
		/* nothing else can come on an established connection */
		fprintf(stderr, "%s: the %s connection had the event: %s\n", l->who, l->name,
			rpma_utils_conn_event_2str(event));
	}
	if (ret == RPMA_E_NO_EVENT)
		return 0;
	report(l->who, "rpma_conn_next_event", ret);
	*why = "its events cannot be taken";
	return -1;
}

/*
 * Closes both connections: rpma_conn_disconnect() on each (for the one
 * whose peer closed it first, that is the answer the peer waits for),
 * then waits a little for each one's RPMA_CONN_CLOSED, so that both are
 * down on both sides before they are deleted. A peer that is gone for
 * good may never confirm: the connection is deleted all the same.
 */
static inline void links_close(struct link links[2])
{
	const char *why;

	for (int i = 0; i < 2; i++) {
		int ret = rpma_conn_disconnect(links[i].conn);

		/* a connection that is down already may refuse: nothing to do then */
		if (ret && !links[i].down)
			report(links[i].who, "rpma_conn_disconnect", ret);
	}
	for (int i = 0; i < 2; i++) {
		struct link *l = &links[i];
		struct pollfd pfd = { l->ev_fd, POLLIN, 0 };

		while (!l->down && link_event(l, &why) == 0) {
			int n = poll(&pfd, 1, CLOSE_WAIT_MS);

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				printf("%s: the %s connection did not confirm its close within "
				       "%d ms; deleted anyway\n",
				       l->who, l->name, CLOSE_WAIT_MS);
				break;
			}
		}
		l->down = true;
	}
}

/*
 * The connection links[gone] went down, or failed: says so in one line,
 * naming the other one, and closes both. A GPSPM connection without its
 * messages connection (or the other way round) is of no use: the client
 * would write records that nobody acknowledges, or send messages about
 * records it can no longer make persistent.
 */
static inline void links_down(struct link links[2], int gone, const char *why, bool expected)
{
	const struct link *l = &links[gone], *other = &links[1 - gone];

	if (expected)
		printf("%s: the %s connection closed; closing the %s connection too\n", l->who,
		       l->name, other->name);
	else
		printf("%s: the %s connection went down (%s); bringing the %s connection down "
		       "too\n",
		       l->who, l->name, why, other->name);
	fflush(stdout);
	links_close(links);
}

#endif /* EXAMPLE_GPSPM_MESSAGES_COMMON_H */
