/*
 * gex-bench's capability shim for Open MPI's OFI MTL over libfabric's shm
 * provider, preloaded into the MTL ping-pong's ranks (LD_PRELOAD) and
 * nowhere else.
 *
 * Open MPI 4.1's MTL asks fi_getinfo for FI_TAGGED | FI_LOCAL_COMM |
 * FI_REMOTE_COMM | FI_DIRECTED_RECV. shm offers no FI_REMOTE_COMM (it
 * reaches only processes of its host), and libfabric 1.17's shm does not
 * list FI_LOCAL_COMM among its capabilities either, so the MTL finds no
 * provider and MPI_Init fails. This fi_getinfo takes both communication
 * bits out of the requested capabilities for the one call, then calls
 * libfabric's own. Nothing else changes: the MTL's
 * tag layout, protocol and progress are Open MPI's; both ranks of the
 * benchmark are on one host, where local communication is all there is.
 *
 * Self-contained: the two leading members of struct fi_info and the
 * capability bits are libfabric's stable ABI (rdma/fabric.h), so it builds
 * without libfabric's headers.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>

#define SHIM_FI_LOCAL_COMM (1ULL << 51)
#define SHIM_FI_REMOTE_COMM (1ULL << 52)
#define SHIM_COMM (SHIM_FI_LOCAL_COMM | SHIM_FI_REMOTE_COMM)

/* The leading members of struct fi_info. */
struct shim_info {
	struct shim_info *next;
	uint64_t caps;
};

typedef int (*getinfo_fn)(uint32_t, const char *, const char *, uint64_t,
			  const void *, void **);

int fi_getinfo(uint32_t version, const char *node, const char *service,
	       uint64_t flags, const void *hints, void **info)
{
	/* libfabric's default version of the symbol: what a program built
	 * against the loaded libfabric calls. */
	static getinfo_fn real;
	if (!real)
		real = (getinfo_fn)dlsym(RTLD_NEXT, "fi_getinfo");
	if (!real)
		return -38; /* -FI_ENOSYS */
	struct shim_info *h = (struct shim_info *)hints;
	if (!h || !(h->caps & SHIM_COMM))
		return real(version, node, service, flags, hints, info);
	uint64_t caps = h->caps;
	h->caps &= ~SHIM_COMM;
	int ret = real(version, node, service, flags, hints, info);
	h->caps = caps;
	return ret;
}
