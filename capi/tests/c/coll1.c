/* GASNet-1's collectives prototype, the part provided (gasnet_coll.h):
 * gasnet_coll_init, GASNET_TEAM_ALL and its queries, and the broadcast,
 * blocking and _nb with every sync, from every root, with every
 * IN_*SYNC x OUT_*SYNC combination under LOCAL and SINGLE addressing, at
 * 1, 100 and 70,000 bytes, the data checked. Two synchronisation
 * promises are checked as a program would rely on them: with
 * IN_ALLSYNC the root's source may still be written by the other nodes
 * (puts into it) until they enter the broadcast; with OUT_ALLSYNC every
 * node's destination is filled when any node returns (read with a get).
 * Prints one line per rank. */
#include <gasnet.h>
#include <gasnet_coll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static gasnet_node_t me, n;
static int errors;
#define FAIL(...) do { fprintf(stderr, "coll1.c: rank %u: ", (unsigned)me); fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); errors++; } while (0)

enum { SEGSZ = 1 << 20, BIG = 70000 };
static unsigned char pat(size_t i, unsigned salt) { return (unsigned char)(i * 13 + salt * 5 + 3); }

int main(int argc, char **argv) {
    if (gasnet_init(&argc, &argv) != GASNET_OK) return 1;
    if (gasnet_attach(NULL, 0, SEGSZ, 0) != GASNET_OK) return 1;
    me = gasnet_mynode(); n = gasnet_nodes();
    gasnet_seginfo_t *segs = malloc(n * sizeof *segs);
    gasnet_getSegmentInfo(segs, (int)n);
    gasnet_coll_init(NULL, 0, NULL, 0, 0);
    if (gasnet_coll_team_size(GASNET_TEAM_ALL) != n) FAIL("team size %u", (unsigned)gasnet_coll_team_size(GASNET_TEAM_ALL));
    for (gasnet_node_t r = 0; r < n; r++)
        if (gasnet_coll_team_rank2node(GASNET_TEAM_ALL, r) != r || gasnet_coll_team_node2rank(GASNET_TEAM_ALL, r) != r) FAIL("rank %u translates", (unsigned)r);

    const int ins[3] = {GASNET_COLL_IN_NOSYNC, GASNET_COLL_IN_MYSYNC, GASNET_COLL_IN_ALLSYNC};
    const int outs[3] = {GASNET_COLL_OUT_NOSYNC, GASNET_COLL_OUT_MYSYNC, GASNET_COLL_OUT_ALLSYNC};
    const size_t sizes[3] = {1, 100, BIG};
    unsigned char *src = malloc(BIG), *dst = malloc(BIG + 1);
    /* SINGLE: the same address on every node (a static array has it). */
    static unsigned char single_dst[BIG + 1];
    unsigned salt = 0, runs = 0;
    for (gasnet_node_t root = 0; root < n; root++)
        for (int i = 0; i < 3; i++)
            for (int o = 0; o < 3; o++)
                for (int addr = 0; addr < 2; addr++)
                    for (int s = 0; s < 3; s++) {
                        size_t nb = sizes[s];
                        salt++;
                        unsigned char *d = addr ? single_dst : dst;
                        memset(d, 0xee, nb + 1);
                        if (me == root)
                            for (size_t k = 0; k < nb; k++) src[k] = pat(k, salt);
                        int flags = ins[i] | outs[o] | (addr ? GASNET_COLL_SINGLE : GASNET_COLL_LOCAL);
                        if ((salt & 1) == 0) gasnet_coll_broadcast(GASNET_TEAM_ALL, d, root, src, nb, flags);
                        else {
                            gasnet_coll_handle_t h = gasnet_coll_broadcast_nb(GASNET_TEAM_ALL, d, root, src, nb, flags);
                            if (salt % 4 == 1) gasnet_coll_wait_sync(h);
                            else while (gasnet_coll_try_sync(h) != GASNET_OK) gasnet_AMPoll();
                        }
                        for (size_t k = 0; k < nb; k++)
                            if (d[k] != pat(k, salt)) { FAIL("broadcast of %zu bytes from %u, flags 0x%x: byte %zu is %u", nb, (unsigned)root, (unsigned)flags, k, d[k]); break; }
                        if (d[nb] != 0xee) FAIL("broadcast of %zu bytes from %u wrote past dst", nb, (unsigned)root);
                        runs++;
                    }

    /* IN_ALLSYNC: each other node puts its byte into the root's source
     * (in the root's segment), then enters; the root's data movement
     * begins only once all have entered, so every byte is there. */
    unsigned char *rsrc = (unsigned char *)segs[0].addr;
    if (me == 0) memset(rsrc, 0, n);
    else rsrc = NULL;
    gasnet_barrier_notify(0, GASNET_BARRIERFLAG_ANONYMOUS);
    gasnet_barrier_wait(0, GASNET_BARRIERFLAG_ANONYMOUS);
    if (me != 0) gasnet_put_val(0, (unsigned char *)segs[0].addr + me, 0x40 + me, 1);
    unsigned char got[256];
    gasnet_coll_broadcast(GASNET_TEAM_ALL, got, 0, rsrc, n, GASNET_COLL_IN_ALLSYNC | GASNET_COLL_OUT_MYSYNC | GASNET_COLL_LOCAL);
    for (gasnet_node_t k = 1; k < n; k++)
        if (got[k] != 0x40 + k) FAIL("IN_ALLSYNC: node %u's put into the source was not broadcast (%u)", (unsigned)k, got[k]);

    /* OUT_ALLSYNC: destinations in every segment; once this node returns,
     * the next node's destination holds the data. */
    unsigned char *segdst = (unsigned char *)segs[me].addr + 4096;
    memset(segdst, 0, 64);
    gasnet_barrier_notify(0, GASNET_BARRIERFLAG_ANONYMOUS);
    gasnet_barrier_wait(0, GASNET_BARRIERFLAG_ANONYMOUS);
    unsigned char src64[64];
    for (int k = 0; k < 64; k++) src64[k] = (unsigned char)(k + 1);
    gasnet_coll_broadcast(GASNET_TEAM_ALL, segdst, n - 1, src64, 64, GASNET_COLL_IN_MYSYNC | GASNET_COLL_OUT_ALLSYNC | GASNET_COLL_LOCAL);
    unsigned char theirs[64];
    gasnet_node_t next = (me + 1) % n;
    gasnet_get(theirs, next, (unsigned char *)segs[next].addr + 4096, 64);
    for (int k = 0; k < 64; k++)
        if (theirs[k] != k + 1) { FAIL("OUT_ALLSYNC: node %u's destination byte %d is %u after the broadcast returned", (unsigned)next, k, theirs[k]); break; }

    if (errors == 0)
        printf("coll1.c: rank %u of %u: ok: %u GASNet-1 broadcasts checked, IN_ALLSYNC and OUT_ALLSYNC kept\n", (unsigned)me, (unsigned)n, runs);
    fflush(stdout);
    gasnet_barrier_notify(0, GASNET_BARRIERFLAG_ANONYMOUS);
    gasnet_barrier_wait(0, GASNET_BARRIERFLAG_ANONYMOUS);
    free(src); free(dst); free(segs);
    gasnet_exit(errors ? 1 : 0);
    return 0;
}
