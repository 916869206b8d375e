/* A provider's own floor for a remote fetch-and-add against its message
 * round trip, with no conduit: two processes (a fork), one libfabric RDM
 * endpoint each on PROVIDER (default shm), rank 1 spinning in fi_cq_read
 * as fi_pingpong's waiting side does, so it serves rank 0's atomics as
 * soon as its provider can. Rank 0 times PAIRS (15) pairs of blocks of
 * ITERS operations: a block of fi_fetch_atomic (FI_SUM, FI_UINT64, one in
 * flight) and a block of 8-byte message round trips (fi_inject and a
 * receive reposted per message, fi_pingpong's loop), the order
 * alternating between pairs; it prints each pair and the medians. Rank 1
 * checks that the fetch-and-adds summed to (PAIRS + 1) x ITERS (a warm-up
 * pair comes first, not counted).
 *
 *   raw_atomic ITERS [PROVIDER]
 *
 * The last line reads "raw PROVIDER: fetch-and-add X us, message round
 * trip Y us, fetch-and-add / round trip Z (...)". X is the floor of the
 * conduit's native fetch-and-add on that provider; an AM-based one is a
 * message round trip plus its handler's work, so the closer the conduit's
 * AM path gets to the provider's round trip, the closer native / AM gets
 * to Z. Built by scripts/bench-coll.sh;
 * docs/PERFORMANCE.md, "The provider's own fetch-and-add". */
#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CHK(x)                                                                 \
	do {                                                                   \
		long _r = (long)(x);                                           \
		if (_r) {                                                      \
			fprintf(stderr, "%s: %ld (%s)\n", #x, _r,              \
				fi_strerror((int)-_r));                        \
			exit(1);                                               \
		}                                                              \
	} while (0)

static struct fid_ep *ep;
static struct fid_cq *cq;
static fi_addr_t peer;
static struct fi_context rctx, actx;
static char rbuf[64], sbuf[64];

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

/* Spin until the completion for `ctx` arrives. */
static void wait_for(void *ctx)
{
	struct fi_cq_entry e;
	for (;;) {
		ssize_t n = fi_cq_read(cq, &e, 1);
		if (n == 1) {
			if (e.op_context == ctx)
				return;
			continue;
		}
		if (n != -FI_EAGAIN) {
			struct fi_cq_err_entry err = {0};
			fi_cq_readerr(cq, &err, 0);
			fprintf(stderr, "cq error %zd: %s\n", n,
				fi_strerror(err.err));
			exit(1);
		}
	}
}

static void post_recv(void)
{
	for (;;) {
		ssize_t r = fi_recv(ep, rbuf, sizeof rbuf, NULL, FI_ADDR_UNSPEC, &rctx);
		if (r == 0)
			return;
		if (r != -FI_EAGAIN)
			CHK(r);
		fi_cq_read(cq, NULL, 0);
	}
}

static void send8(void)
{
	for (;;) {
		ssize_t r = fi_inject(ep, sbuf, 8, peer);
		if (r == 0)
			return;
		if (r != -FI_EAGAIN)
			CHK(r);
		fi_cq_read(cq, NULL, 0);
	}
}

static volatile sig_atomic_t finishing;

/* Rank 0 ends if rank 1 ends first (it failed: rank 0 would wait for ever). */
static void on_child(int sig)
{
	(void)sig;
	if (!finishing) {
		static const char m[] = "raw_atomic: rank 1 ended early\n";
		if (write(2, m, sizeof m - 1) < 0)
			_exit(1);
		_exit(1);
	}
}

static int cmpd(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	char *end = NULL;
	long iters = argc > 1 ? strtol(argv[1], &end, 10) : 0;
	const char *prov = argc > 2 ? argv[2] : "shm";
	int up[2], down[2];
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: raw_atomic ITERS [PROVIDER] (%d arguments given)\n", argc - 1);
		return 2;
	}
	if (*end || iters <= 0 || iters > 100000000) {
		fprintf(stderr, "raw_atomic: ITERS must be a count from 1 to 100000000, not '%s'\n"
			"usage: raw_atomic ITERS [PROVIDER]\n", argc > 1 ? argv[1] : "");
		return 2;
	}
	/* The provider is checked before the fork, so a refusal is reported
	 * once, by the process that was started; each rank asks again after
	 * it (shm's answer names an address of the process that asked). */
	struct fi_info *hints = fi_allocinfo(), *info;
	hints->caps = FI_MSG | FI_RMA | FI_ATOMIC;
	hints->ep_attr->type = FI_EP_RDM;
	hints->mode = FI_CONTEXT;
	hints->domain_attr->mr_mode =
		FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	hints->fabric_attr->prov_name = strdup(prov);
	int rc = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &info);
	if (rc) {
		fprintf(stderr, "raw_atomic: no '%s' RDM endpoint with FI_MSG, FI_RMA and FI_ATOMIC "
			"and virtual-address, allocated, provider-keyed MRs (fi_getinfo: %s); "
			"see fi_info -l for the providers here\n", prov, fi_strerror(-rc));
		return 1;
	}
	fi_freeinfo(info);
	if (pipe(up) || pipe(down)) {
		perror("raw_atomic: pipe");
		return 1;
	}
	pid_t parent = getpid();
	struct sigaction sa = {.sa_handler = on_child, .sa_flags = SA_NOCLDSTOP};
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGCHLD, &sa, NULL)) {
		perror("raw_atomic: sigaction");
		return 1;
	}
	pid_t child = fork();
	if (child < 0) {
		perror("raw_atomic: fork");
		return 1;
	}
	int rank = child == 0;
	/* Rank 1 ends with rank 0 (a timeout that stops rank 0 must not leave
	 * it spinning). */
	if (rank == 1 && (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent))
		return 1;
	int wfd = rank ? up[1] : down[1], rfd = rank ? down[0] : up[0];
	CHK(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &info));

	struct fid_fabric *fab;
	struct fid_domain *dom;
	struct fid_av *av;
	CHK(fi_fabric(info->fabric_attr, &fab, NULL));
	CHK(fi_domain(fab, info, &dom, NULL));
	struct fi_cq_attr cqa = {.format = FI_CQ_FORMAT_CONTEXT, .size = 128};
	CHK(fi_cq_open(dom, &cqa, &cq, NULL));
	struct fi_av_attr ava = {.type = FI_AV_TABLE};
	CHK(fi_av_open(dom, &ava, &av, NULL));
	CHK(fi_endpoint(dom, info, &ep, NULL));
	CHK(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV));
	CHK(fi_ep_bind(ep, &av->fid, 0));
	CHK(fi_enable(ep));

	static uint64_t seg[512], result, one = 1;
	struct fid_mr *mr;
	CHK(fi_mr_reg(dom, seg, sizeof seg, FI_REMOTE_READ | FI_REMOTE_WRITE,
		      0, 0, 0, &mr, NULL));
	struct {
		char name[256];
		size_t len;
		uint64_t key, addr;
	} me = {.len = sizeof me.name}, them;
	CHK(fi_getname(&ep->fid, me.name, &me.len));
	me.key = fi_mr_key(mr);
	/* Without FI_MR_VIRT_ADDR a remote address is an offset into the MR. */
	me.addr = (info->domain_attr->mr_mode & FI_MR_VIRT_ADDR) ? (uintptr_t)seg : 0;
	if (write(wfd, &me, sizeof me) != sizeof me ||
	    read(rfd, &them, sizeof them) != sizeof them) {
		fprintf(stderr, "raw_atomic: rank %d: the address exchange failed\n", rank);
		return 1;
	}
	if (fi_av_insert(av, them.name, 1, &peer, 0, NULL) != 1) {
		fprintf(stderr, "raw_atomic: rank %d: fi_av_insert failed\n", rank);
		return 1;
	}

	enum { PAIRS = 15 };
	double at[PAIRS], pp[PAIRS], ratio[PAIRS];
	/* q = -1: a warm-up pair (connections, caches), not counted. */
	for (int q = -1; q < PAIRS; q++) {
		int p = q < 0 ? 0 : q, warm = q < 0;
		for (int half = 0; half < 2; half++) {
			int atomic = (p & 1) ? half == 1 : half == 0;
			if (rank == 1) {
				if (atomic) { /* serve until rank 0 says stop */
					post_recv();
					wait_for(&rctx);
				} else {
					for (int i = 0; i < iters; i++) {
						post_recv();
						wait_for(&rctx);
						send8();
					}
				}
				continue;
			}
			double t0 = now();
			if (atomic) {
				for (int i = 0; i < iters; i++) {
					ssize_t r;
					while ((r = fi_fetch_atomic(
							ep, &one, 1, NULL, &result, NULL,
							peer, them.addr + 8 * (p % 8),
							them.key, FI_UINT64, FI_SUM,
							&actx)) == -FI_EAGAIN)
						fi_cq_read(cq, NULL, 0);
					CHK(r);
					wait_for(&actx);
				}
				if (!warm)
					at[p] = (now() - t0) / iters * 1e6;
				send8(); /* stop */
			} else {
				for (int i = 0; i < iters; i++) {
					post_recv();
					send8();
					wait_for(&rctx);
				}
				if (!warm)
					pp[p] = (now() - t0) / iters * 1e6;
			}
		}
		/* keep the blocks apart */
		if (rank == 0) {
			post_recv();
			send8();
			wait_for(&rctx);
		} else {
			post_recv();
			wait_for(&rctx);
			send8();
		}
		if (rank == 0 && !warm)
			ratio[p] = at[p] / pp[p];
	}
	/* Rank 1 may end now: rank 0 says it is done with it first, so its
	 * end is not taken for a failure and no message is in flight. */
	char done = 0;
	if (rank == 0) {
		finishing = 1;
		if (write(wfd, &done, 1) != 1) {
			perror("raw_atomic: rank 0: write");
			return 1;
		}
	} else if (read(rfd, &done, 1) != 1) {
		fprintf(stderr, "raw_atomic: rank 1: rank 0 ended early\n");
		return 1;
	}
	if (rank == 0) {
		for (int p = 0; p < PAIRS; p++)
			printf("pair %2d: fetch-and-add %.3f us, message round trip %.3f us, ratio %.3f\n",
			       p, at[p], pp[p], ratio[p]);
		qsort(at, PAIRS, sizeof at[0], cmpd);
		qsort(pp, PAIRS, sizeof pp[0], cmpd);
		qsort(ratio, PAIRS, sizeof ratio[0], cmpd);
		printf("raw %s: fetch-and-add %.3f us, message round trip %.3f us, fetch-and-add / round trip %.3f (medians of %d pairs of %ld)\n",
		       prov, at[PAIRS / 2], pp[PAIRS / 2], ratio[PAIRS / 2], PAIRS, iters);
		int st = 0;
		if (waitpid(child, &st, 0) != child || !WIFEXITED(st) || WEXITSTATUS(st)) {
			fprintf(stderr, "raw_atomic: rank 1 failed\n");
			return 1;
		}
	} else {
		uint64_t sum = 0;
		for (int i = 0; i < 8; i++)
			sum += seg[i];
		if (sum != (uint64_t)(PAIRS + 1) * iters) {
			fprintf(stderr, "raw_atomic: rank 1: fetch-and-adds summed to %lu, not %lu\n",
				(unsigned long)sum, (unsigned long)((PAIRS + 1) * iters));
			return 1;
		}
	}
	fi_close(&ep->fid);
	fi_close(&mr->fid);
	fi_close(&av->fid);
	fi_close(&cq->fid);
	fi_close(&dom->fid);
	fi_close(&fab->fid);
	return 0;
}
