/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rpma-mirror.c -- copy a file or a device into a remote target's pmem:
 *                  the command line, and what both sides share
 *
 * usage: rpma-mirror [options] -k KEYFILE SOURCE ADDR:PORT
 *        rpma-mirror --make-key KEYFILE
 *        rpma-mirror --serve [options] -k KEYFILE ADDR:PORT TARGET
 *
 * See rpma-mirror(1). The server (server.c) maps TARGET with libpmem2 and
 * offers it for remote writes, reads and persistent flushes to clients
 * that prove they hold the pre-shared key. The client (client.c) mirrors
 * SOURCE into the first bytes of TARGET in chunks, sends only the chunks
 * that differ, and reads back what it sent to compare it byte for byte.
 */

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "mirror.h"

static void on_signal(int sig)
{
	stop_signal = sig;
}

/* ----- the command line ------------------------------------------------- */

static void usage(FILE *to)
{
	fprintf(to,
		"usage: %s [options] -k KEYFILE SOURCE ADDR:PORT\n"
		"       %s --serve [options] -k KEYFILE ADDR:PORT TARGET\n"
		"       %s --make-key KEYFILE\n"
		"Copies SOURCE into the first bytes of TARGET on another host over RDMA,\n"
		"persistent there, and checks the copy. ADDR: IPv4, [IPv6] or a host name;\n"
		"PORT: 1 to 65535.\n"
		"both sides:\n"
		"  -k, --key KEYFILE     the pre-shared key (32 to 1024 bytes, mode 600)\n"
		"      --make-key KEYFILE  make a new random key there (mode 600), and exit\n"
		"  -q, --quiet           nothing on standard output\n"
		"  -v, --verbose         progress lines when not on a terminal; the handshakes\n"
		"  -h, --help            this, and exit\n"
		"  -V, --version         the version, and exit\n"
		"the client:\n"
		"      --verify-only     compare the target with SOURCE, copy nothing\n"
		"      --fresh           send every chunk, without reading the target first\n"
		"      --chunk SIZE      bytes a chunk, 4K to 64M (1M)\n"
		"      --window N        chunks in flight, 1 to %d (8)\n"
		"      --limit RATE      bytes a second at most\n"
		"      --json            the summary as a JSON object\n"
		"the server:\n"
		"      --serve           be the target's side\n"
		"      --direct-write-to-pmem  the NIC's writes to TARGET are persistent\n"
		"      --once            stop after the first client\n"
		"      --allow ADDR[/PREFIX]  let in only these peers (repeatable)\n"
		"      --penalty-exempt ADDR[/PREFIX]  never refuse these peers unread after\n"
		"                        refusals (repeatable)\n"
		"SIZE and RATE take K, M and G (powers of 1024). Exit status: 0 the same,\n"
		"1 different, 2 trouble, 128+N after signal N. See rpma-mirror(1).\n",
		prog, prog, prog, WINDOW_MAX);
}

/* a number with an optional K, M or G, nothing after it; 0 or -1 */
static int parse_size(const char *arg, uint64_t *out)
{
	unsigned long long v;
	unsigned shift = 0;
	char *end;

	if (*arg < '0' || *arg > '9')
		return -1;
	errno = 0;
	v = strtoull(arg, &end, 10);
	if (errno)
		return -1;
	switch (*end) {
	case 'K':
	case 'k':
		shift = 10, end++;
		break;
	case 'M':
	case 'm':
		shift = 20, end++;
		break;
	case 'G':
	case 'g':
		shift = 30, end++;
		break;
	default:
		break;
	}
	if (*end || v > (UINT64_MAX >> shift))
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}

/*
 * A port as a decimal number, 1 to 65535: rdma_getaddrinfo() takes a
 * service name or any number, and the connection then fails with "No such
 * device" for a port beyond 65535, which says nothing about the mistake.
 */
static bool is_port(const char *s)
{
	unsigned long v = 0;

	if (!*s)
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return false;
		v = v * 10 + (unsigned long)(*s - '0');
		if (v > 65535)
			return false;
	}
	return v != 0;
}

/*
 * ADDR:PORT, [IPV6]:PORT or HOST:PORT, split in place; -1 when it is none
 * of them. A bare IPv6 address is refused: where its port starts is a guess.
 * The port is checked apart (is_port), for a message of its own.
 */
static int split_endpoint(char *arg, const char **addr, const char **port)
{
	char *colon;

	if (arg[0] == '[') {
		char *close = strchr(arg, ']');

		if (!close || close == arg + 1 || close[1] != ':' || !close[2])
			return -1;
		*close = '\0';
		*addr = arg + 1;
		*port = close + 2;
		return 0;
	}
	colon = strchr(arg, ':');
	if (!colon || colon == arg || !colon[1] || strchr(colon + 1, ':'))
		return -1;
	*colon = '\0';
	*addr = arg;
	*port = colon + 1;
	return 0;
}

enum option_id {
	OPT_SERVE = 256,
	OPT_DIRECT,
	OPT_ONCE,
	OPT_ALLOW,
	OPT_EXEMPT,
	OPT_VERIFY,
	OPT_FRESH,
	OPT_CHUNK,
	OPT_WINDOW,
	OPT_LIMIT,
	OPT_JSON,
	OPT_MAKE_KEY,
};

int main(int argc, char *argv[])
{
	static const struct option options[] = {
		{ "key", required_argument, NULL, 'k' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ "serve", no_argument, NULL, OPT_SERVE },
		{ "direct-write-to-pmem", no_argument, NULL, OPT_DIRECT },
		{ "once", no_argument, NULL, OPT_ONCE },
		{ "allow", required_argument, NULL, OPT_ALLOW },
		{ "penalty-exempt", required_argument, NULL, OPT_EXEMPT },
		{ "verify-only", no_argument, NULL, OPT_VERIFY },
		{ "fresh", no_argument, NULL, OPT_FRESH },
		{ "chunk", required_argument, NULL, OPT_CHUNK },
		{ "window", required_argument, NULL, OPT_WINDOW },
		{ "limit", required_argument, NULL, OPT_LIMIT },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "make-key", required_argument, NULL, OPT_MAKE_KEY },
		{ NULL, 0, NULL, 0 },
	};
	static struct server_options so;
	static struct client_options co;
	static struct psk key;
	const char *key_file = NULL;
	const char *server_only = NULL, *client_only = NULL;
	bool serve_mode = false, verbose = false;
	uint64_t v;
	int opt;

	co.chunk = 1u << 20;
	co.window = 8;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":k:qvhV", options, NULL)) != -1) {
		switch (opt) {
		case 'k':
			key_file = optarg;
			break;
		case 'q':
			quiet = true;
			break;
		case 'v':
			verbose = true;
			break;
		case 'h':
			usage(stdout);
			return EXIT_SAME;
		case 'V':
			printf("%s (rpma-ng) %s\n", prog, RPMA_MIRROR_VERSION);
			return EXIT_SAME;
		case OPT_SERVE:
			serve_mode = true;
			break;
		case OPT_DIRECT:
			so.declared = true;
			server_only = "--direct-write-to-pmem";
			break;
		case OPT_ONCE:
			so.once = true;
			server_only = "--once";
			break;
		case OPT_ALLOW:
		case OPT_EXEMPT: {
			const bool allow = opt == OPT_ALLOW;
			struct psk_allow *rules = allow ? so.allow : so.exempt;
			int *n = allow ? &so.nallow : &so.nexempt;

			server_only = allow ? "--allow" : "--penalty-exempt";
			if (*n == ALLOW_MAX) {
				complain("%s is taken %d times at most", server_only, ALLOW_MAX);
				return EXIT_TROUBLE;
			}
			if (psk_allow_parse(optarg, &rules[*n])) {
				complain("%s takes ADDR or ADDR/PREFIX (192.0.2.0/24, "
					 "2001:db8::/32), not %s",
					 server_only, optarg);
				return EXIT_TROUBLE;
			}
			(*n)++;
			break;
		}
		case OPT_VERIFY:
			co.verify_only = true;
			client_only = "--verify-only";
			break;
		case OPT_FRESH:
			co.fresh = true;
			client_only = "--fresh";
			break;
		case OPT_CHUNK:
			client_only = "--chunk";
			if (parse_size(optarg, &v) || v < CHUNK_MIN || v > CHUNK_MAX) {
				complain("--chunk takes 4K to 64M, not %s", optarg);
				return EXIT_TROUBLE;
			}
			co.chunk = (uint32_t)v;
			break;
		case OPT_WINDOW:
			client_only = "--window";
			if (parse_size(optarg, &v) || v < 1 || v > WINDOW_MAX ||
			    strpbrk(optarg, "KkMmGg")) {
				complain("--window takes 1 to %d, not %s", WINDOW_MAX, optarg);
				return EXIT_TROUBLE;
			}
			co.window = (int)v;
			break;
		case OPT_LIMIT:
			client_only = "--limit";
			if (parse_size(optarg, &v) || v == 0) {
				complain("--limit takes bytes a second (100M, 1G), not %s", optarg);
				return EXIT_TROUBLE;
			}
			co.limit = (double)v;
			break;
		case OPT_JSON:
			co.json = true;
			client_only = "--json";
			break;
		case OPT_MAKE_KEY: {
			char why[256];

			if (psk_make(optarg, why, sizeof(why))) {
				complain("%s", why);
				return EXIT_TROUBLE;
			}
			return EXIT_SAME;
		}
		case ':':
			complain("%s needs a value", argv[optind - 1]);
			usage(stderr);
			return EXIT_TROUBLE;
		default:
			complain("%s is not an option", argv[optind - 1]);
			usage(stderr);
			return EXIT_TROUBLE;
		}
	}
	if (serve_mode && client_only) {
		complain("%s is the client's option, not the server's (--serve)", client_only);
		return EXIT_TROUBLE;
	}
	if (!serve_mode && server_only) {
		complain("%s is the server's option: it goes with --serve", server_only);
		return EXIT_TROUBLE;
	}
	if (argc - optind != 2) {
		const char *wanted = serve_mode ? "ADDR:PORT and TARGET" : "SOURCE and ADDR:PORT";

		if (argc - optind == 0)
			complain("%s are missing", wanted);
		else if (argc - optind == 1)
			complain("%s takes %s, and only %s was given",
				 serve_mode ? "--serve" : "a client", wanted, argv[optind]);
		else
			complain("%s takes %s, not %d operands (the first one too many: %s)",
				 serve_mode ? "--serve" : "a client", wanted, argc - optind,
				 argv[optind + 2]);
		usage(stderr);
		return EXIT_TROUBLE;
	}
	char *endpoint = argv[optind + (serve_mode ? 0 : 1)];
	char shown[256];
	const char *addr, *port;

	snprintf(shown, sizeof(shown), "%s", endpoint);
	if (split_endpoint(endpoint, &addr, &port)) {
		complain("%s is not ADDR:PORT (an IPv6 address goes in brackets: "
			 "[2001:db8::1]:7700)",
			 shown);
		return EXIT_TROUBLE;
	}
	if (!is_port(port)) {
		complain("%s: the port must be a number from 1 to 65535, not %s", shown, port);
		return EXIT_TROUBLE;
	}
	if (!key_file) {
		complain(
		    "a key is needed on both sides: -k KEYFILE (see SECURITY in rpma-mirror(1))");
		return EXIT_TROUBLE;
	}
	char why[256];

	if (psk_load(key_file, &key, why, sizeof(why))) {
		complain("%s", why);
		return EXIT_TROUBLE;
	}

	/* the signals end what is going on in an orderly way */
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	int status;

	if (serve_mode) {
		so.addr = addr;
		so.port = port;
		so.target = argv[optind + 1];
		so.key = &key;
		so.verbose = verbose;
		status = run_server(&so);
	} else {
		co.addr = addr;
		co.port = port;
		co.endpoint = shown;
		co.source = argv[optind];
		co.key = &key;
		co.verbose = verbose;
		status = run_client(&co);
	}
	psk_wipe(&key);
	return status;
}
