/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * raw-peer.c -- a peer for the checks: a connection request carrying any
 *               private data, then silence
 *
 * usage: raw-peer <addr> <port> <hex> <seconds> [<hex> <seconds>]...
 *
 * Connects to addr:port with the bytes of <hex> (at most 56, what a
 * connection request carries on RoCE) as the request's private data. When
 * the server accepts, it prints the answer's private data in hex, then says
 * nothing for <seconds> -- it neither writes nor disconnects -- unless the
 * server disconnects first, which it reports with the time it took. That
 * is what a server must survive from a peer that is broken or hostile:
 * requests that are not what it expects, and connections left open.
 *
 * A <hex> of "-" is read from the standard input, once the request is made:
 * raw-peer first prints "raw-peer: queue pair N", the number of the
 * request's queue pair as the connection manager names it to the server (0
 * over iWARP, whose connection manager does not), so that a check can bind
 * a PROVE it computes to it, then reads one line of hex digits.
 *
 * With more than one pair of <hex> and <seconds>, one peer after another,
 * each with its own connection, from one process (in the test VM a process
 * costs more than the connection): each line a peer prints starts with
 * "peer N: " (N from 1), and its last is "peer N: status S", S the status
 * it alone would have exited with.
 *
 * Exit status: 0 accepted (whoever disconnected); 1 turned down or the
 * connection failed; 2 bad usage. With several peers: 0, or 1 when the
 * device could not be opened, 2 bad usage.
 */

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>
#include <librpma.h>

#define REQUEST_MAX 56

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* the bytes of a string of hex digits; their number, or -1 */
static int from_hex(const char *hex, unsigned char *buf, size_t size)
{
	size_t len = strlen(hex);

	if (len % 2 || len / 2 > size)
		return -1;
	for (size_t i = 0; i < len / 2; i++) {
		unsigned v;

		if (sscanf(hex + 2 * i, "%2x", &v) != 1)
			return -1;
		buf[i] = (unsigned char)v;
	}
	return (int)(len / 2);
}

/* what a librpma call that returned ret said, the provider's errno included */
static const char *why(int ret)
{
	return ret == RPMA_E_PROVIDER ? strerror(rpma_err_get_provider_error())
				      : rpma_err_2str(ret);
}

/* "peer N: " before each line of a peer of several; nothing for one alone */
static char prefix[32];

/* whether the connection manager names the request's queue pair (not on iWARP) */
static bool cm_names_qp;

/*
 * The private data of "-": the queue pair number of req printed, one line
 * of hex read from the standard input; its length, or -1 (said)
 */
static int request_from_stdin(struct rpma_conn_req *req, unsigned char *request, size_t size)
{
	char line[2 * REQUEST_MAX + 2];
	uint32_t qp = 0;
	int ret = cm_names_qp ? rpma_conn_req_get_qp_num(req, &qp) : 0;

	if (ret) {
		printf("%sraw-peer: turned down: no queue pair number: %s\n", prefix, why(ret));
		return -1;
	}
	printf("%sraw-peer: queue pair %u\n", prefix, qp);
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin)) {
		printf("%sraw-peer: turned down: nothing to send on the standard input\n", prefix);
		return -1;
	}
	line[strcspn(line, "\r\n")] = '\0';
	const int len = from_hex(line, request, size);

	if (len < 0)
		printf("%sraw-peer: turned down: the standard input held no private data in hex\n",
		       prefix);
	return len;
}

/*
 * One peer: a connection request with request[len] as its private data
 * (len -1: read it, request_from_stdin()), then silence for seconds once
 * accepted; its exit status.
 */
static int one_peer(struct rpma_peer *peer, const char *addr, const char *port,
		    unsigned char *request, int len, double seconds)
{
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = NULL;
	enum rpma_conn_event event = RPMA_CONN_UNDEFINED;
	struct rpma_conn_private_data pdata = { request, (uint8_t)len };
	int status = 1;
	int ret;

	ret = rpma_conn_req_new(peer, addr, port, NULL, &req);
	if (!ret && len < 0) {
		len = request_from_stdin(req, request, REQUEST_MAX);
		if (len < 0)
			goto out;
		pdata.len = (uint8_t)len;
	}
	if (!ret)
		ret = rpma_conn_req_connect(&req, &pdata, &conn);
	if (!ret)
		ret = rpma_conn_next_event(conn, &event);
	struct rpma_conn_private_data answer;

	if (ret || event != RPMA_CONN_ESTABLISHED) {
		/* iWARP says no with ECONNREFUSED from the connect itself */
		printf("%sraw-peer: turned down: %s", prefix,
		       ret ? why(ret) : rpma_utils_conn_event_2str(event));
		/* what the reject carried (a replica's challenge), when it was not all zeros */
		if (!ret && event == RPMA_CONN_REJECTED &&
		    rpma_conn_get_private_data(conn, &answer) == 0 && answer.ptr &&
		    answer.len >= 4 && memcmp(answer.ptr, "\0\0\0\0", 4) != 0) {
			printf(", the answer: ");
			for (int i = 0; i < answer.len; i++)
				printf("%02x", ((unsigned char *)answer.ptr)[i]);
		}
		printf("\n");
		goto out;
	}

	printf("%sraw-peer: accepted", prefix);
	if (rpma_conn_get_private_data(conn, &answer) == 0 && answer.ptr) {
		printf(", the answer: ");
		for (int i = 0; i < answer.len; i++)
			printf("%02x", ((unsigned char *)answer.ptr)[i]);
	}
	printf("\n");
	fflush(stdout);
	status = 0;

	/* silence: only the server's events are taken */
	double t0 = now_s(), left;
	int fd;

	if (rpma_conn_get_event_fd(conn, &fd))
		goto out;
	while ((left = seconds - (now_s() - t0)) > 0) {
		struct pollfd pfd = { fd, POLLIN, 0 };

		if (poll(&pfd, 1, (int)(left * 1000) + 1) < 0 && errno != EINTR)
			break;
		if (!(pfd.revents & POLLIN))
			continue;
		if (rpma_conn_next_event(conn, &event) == 0 && event != RPMA_CONN_ESTABLISHED) {
			printf("%sraw-peer: the server disconnected after %.1f s (%s)\n", prefix,
			       now_s() - t0, rpma_utils_conn_event_2str(event));
			goto out;
		}
	}
	printf("%sraw-peer: hung up after %.1f s of silence\n", prefix, now_s() - t0);
	if (rpma_conn_disconnect(conn) == 0)
		(void)rpma_conn_next_event(conn, &event);
out:
	fflush(stdout);
	if (conn)
		(void)rpma_conn_delete(&conn);
	if (req)
		(void)rpma_conn_req_delete(&req);
	return status;
}

int main(int argc, char *argv[])
{
	unsigned char request[REQUEST_MAX];
	const int peers = (argc - 3) / 2;
	bool usage = argc < 5 || (argc - 3) % 2;

	/* every pair checked before the first peer goes */
	for (int k = 0; !usage && k < peers; k++) {
		char *end = "";
		usage = (strcmp(argv[3 + 2 * k], "-") != 0 &&
			 from_hex(argv[3 + 2 * k], request, sizeof(request)) < 0) ||
			strtod(argv[4 + 2 * k], &end) < 0 || *end;
	}
	if (usage) {
		fprintf(stderr,
			"usage: %s <addr> <port> <hex> <seconds> [<hex> <seconds>]...\n"
			"  <hex>      the request's private data, at most %d bytes (\"-\": read\n"
			"             from the standard input after the queue pair is named)\n"
			"  <seconds>  how long to stay connected and silent\n",
			argv[0], REQUEST_MAX);
		return 2;
	}
	const char *addr = argv[1];
	const char *port = argv[2];
	struct ibv_context *ibv_ctx = NULL;
	struct rpma_peer *peer = NULL;

	int ret = rpma_utils_get_ibv_context(addr, RPMA_UTIL_IBV_CONTEXT_REMOTE, &ibv_ctx);
	if (!ret)
		ret = rpma_peer_new(ibv_ctx, &peer);
	if (ret) {
		printf("raw-peer: turned down: %s\n", why(ret));
		return 1;
	}
	cm_names_qp = ibv_ctx->device->transport_type != IBV_TRANSPORT_IWARP;
	int status = 0;

	for (int k = 0; k < peers; k++) {
		const int len = strcmp(argv[3 + 2 * k], "-") == 0
				    ? -1
				    : from_hex(argv[3 + 2 * k], request, sizeof(request));
		const double seconds = strtod(argv[4 + 2 * k], NULL);

		if (peers > 1)
			snprintf(prefix, sizeof(prefix), "peer %d: ", k + 1);
		status = one_peer(peer, addr, port, request, len, seconds);
		if (peers > 1) {
			printf("%sstatus %d\n", prefix, status);
			status = 0;
		}
	}
	fflush(stdout);
	(void)rpma_peer_delete(&peer);
	return status;
}
