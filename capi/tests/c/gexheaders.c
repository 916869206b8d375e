/* A GASNet-EX program that includes only gasnetex.h and the
 * specification's gasnet_coll.h, gasnet_vis.h and gasnet_ratomic.h (no
 * gasnet.h, no gasnet_tools.h), as GASNet-EX's own tests do, and uses the
 * names a gasnetex.h-only program needs: PRIuPTR (<inttypes.h>), PRIuSZ,
 * PRIdSZ, GASNET_PAGESIZE, gasnet_getMaxLocalSegmentSize,
 * gasnet_getMaxGlobalSegmentSize, gasnet_getenv,
 * GASNET_BARRIERFLAG_MISMATCH, and the tools names GASNETT_EXTERNC,
 * GASNETT_NEVER_INLINE, gasnett_local_wmb/rmb/mb, GASNETT_CACHE_LINE_BYTES,
 * GASNETT_SPEC_VERSION_MAJOR/MINOR and <limits.h>'s. Built with -Wall
 * -Wextra -Werror -std=c99, so an undeclared function (an implicit int
 * that would truncate a size) or a format that does not fit its argument
 * fails the build. Then a reduction, a VIS put and an atomic (one
 * function of each new header's area) run. Prints one line per rank. */
#include <gasnetex.h>
#include <gasnet_coll.h>
#include <gasnet_vis.h>
#include <gasnet_ratomic.h>
#include <gasnetex.h> /* twice: the include guards hold */
#include <gasnet_coll.h>
#include <stdio.h>
#include <string.h>

#if !defined(GASNET_PAGESIZE) || GASNET_PAGESIZE < 4096 || GASNET_PAGESIZE % 4096
#error GASNET_PAGESIZE
#endif
#if !defined(GASNET_BARRIERFLAG_MISMATCH) || GASNET_BARRIERFLAG_MISMATCH != 2
#error GASNET_BARRIERFLAG_MISMATCH (GASNet: 2)
#endif
#if GASNETT_SPEC_VERSION_MAJOR != 1 || GASNETT_SPEC_VERSION_MINOR != 17
#error GASNETT_SPEC_VERSION (GASNet-EX.txt: 1.17)
#endif
#if GASNETT_CACHE_LINE_BYTES < 32 || (GASNETT_CACHE_LINE_BYTES & (GASNETT_CACHE_LINE_BYTES - 1))
#error GASNETT_CACHE_LINE_BYTES
#endif
#if !defined(INT_MAX) || !defined(CHAR_BIT)
#error limits.h
#endif
#if !defined(PRIuPTR) || !defined(PRIuSZ) || !defined(PRIdSZ)
#error format macros
#endif

static gex_Rank_t me, n;
static int errors;
#define FAIL(...) do { fprintf(stderr, "gexheaders.c: rank %u: ", (unsigned)me); fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); errors++; } while (0)

GASNETT_EXTERNC int twice(int x);
int twice(int x) { return 2 * x; }
GASNETT_NEVER_INLINE(thrice, static int thrice(int x)) { return 3 * x; }

/* A cache-line padded flag, published with the barriers. */
static struct { volatile int flag; char pad[GASNETT_CACHE_LINE_BYTES - sizeof(int)]; } line;

int main(int argc, char **argv) {
    gex_Client_t client; gex_EP_t ep; gex_TM_t tm; gex_Segment_t seg;
    if (gex_Client_Init(&client, &ep, &tm, "GEXHEADERS", &argc, &argv, 0) != GASNET_OK) return 1;
    me = gex_TM_QueryRank(tm); n = gex_TM_QuerySize(tm);

    /* Segment limits, before the attach, as the specification's
     * gex_Segment_Attach text uses them: full-width uintptr_t values. */
    uintptr_t local = gasnet_getMaxLocalSegmentSize(), global = gasnet_getMaxGlobalSegmentSize();
    if (sizeof(gasnet_getMaxLocalSegmentSize()) != sizeof(uintptr_t) || sizeof(gasnet_getMaxGlobalSegmentSize()) != sizeof(uintptr_t))
        FAIL("the segment-size queries do not return uintptr_t");
    if (global == 0 || global > local || global % GASNET_PAGESIZE)
        FAIL("segment limits: local %" PRIuPTR ", global %" PRIuPTR, local, global);
    uintptr_t segsz = 16 * GASNET_PAGESIZE;
    if (segsz > global) segsz = global - global % GASNET_PAGESIZE;
    if (gex_Segment_Attach(&seg, tm, segsz) != GASNET_OK) return 1;

    /* The launcher's environment (the test suite sets this variable). */
    const char *v = gasnet_getenv("GASNET_SUPERNODE_MAXSIZE");
    if (!v || (strcmp(v, "0") && strcmp(v, "1"))) FAIL("gasnet_getenv(GASNET_SUPERNODE_MAXSIZE) = %s", v ? v : "(null)");

    /* gasnet_coll.h: the job's smallest local limit is the global one. */
    uint64_t mine = local, smallest = 0;
    gex_Event_Wait(gex_Coll_ReduceToAllNB(tm, &smallest, &mine, GEX_DT_U64, sizeof mine, 1, GEX_OP_MIN, NULL, NULL, 0));
    if (smallest != global) FAIL("min of gasnet_getMaxLocalSegmentSize %llu, global %" PRIuPTR, (unsigned long long)smallest, global);

    /* gasnet_vis.h: two pieces to the next rank's segment. */
    gex_Rank_t right = (me + 1) % n, left = (me + n - 1) % n;
    void *peer; uintptr_t psize;
    gex_Event_Wait(gex_EP_QueryBoundSegmentNB(tm, right, &peer, NULL, &psize, 0));
    char *mybase = (char *)gex_Segment_QueryAddr(seg);
    char a[8], b[8];
    memset(a, 'a' + (int)(me % 26), sizeof a);
    memset(b, 'A' + (int)(me % 26), sizeof b);
    gex_Memvec_t src[2] = {{a, sizeof a}, {b, sizeof b}};
    gex_Memvec_t dst[2] = {{(char *)peer + 64, sizeof a}, {(char *)peer + 128, sizeof b}};
    gex_VIS_VectorPutBlocking(tm, right, 2, dst, 2, src, 0);

    /* gasnet_ratomic.h: every rank adds its rank + 1 to rank 0's word. */
    gex_AD_t ad;
    gex_AD_Create(&ad, tm, GEX_DT_U64, GEX_OP_FADD | GEX_OP_GET, 0);
    void *root; gex_Event_Wait(gex_EP_QueryBoundSegmentNB(tm, 0, &root, NULL, NULL, 0));
    uint64_t old = 0;
    gex_Event_Wait(gex_AD_OpNB_U64(ad, &old, 0, root, GEX_OP_FADD, me + 1, 0, 0));

    /* Tools: fences around a flag; the externc and never-inline functions. */
    line.flag = twice(thrice((int)me));
    gasnett_local_wmb();
    gasnett_local_mb();
    gasnett_local_rmb();
    if (line.flag != 6 * (int)me) FAIL("GASNETT_EXTERNC/GASNETT_NEVER_INLINE functions: %d", line.flag);
    if (sizeof line != GASNETT_CACHE_LINE_BYTES) FAIL("padded line of %u bytes", (unsigned)sizeof line);

    /* A wait may pass GASNET_BARRIERFLAG_MISMATCH (only a notify's counts,
     * and a notify's is refused here: docs/c-api.md). */
    gasnet_barrier_notify(0, 0);
    int rc = gasnet_barrier_wait(0, GASNET_BARRIERFLAG_MISMATCH);
    if (rc != GASNET_OK) FAIL("wait with GASNET_BARRIERFLAG_MISMATCH after a plain notify: %s", gasnet_ErrorName(rc));

    char want_a = (char)('a' + (int)(left % 26)), want_b = (char)('A' + (int)(left % 26));
    for (size_t i = 0; i < sizeof a; i++)
        if (mybase[64 + i] != want_a || mybase[128 + i] != want_b) { FAIL("VIS piece byte %u from rank %u", (unsigned)i, (unsigned)left); break; }
    uint64_t total = 0;
    if (me == 0) {
        gex_Event_Wait(gex_AD_OpNB_U64(ad, &total, 0, root, GEX_OP_GET, 0, 0, 0));
        if (total != (uint64_t)n * (n + 1) / 2) FAIL("atomic sum %llu, want %llu", (unsigned long long)total, (unsigned long long)n * (n + 1) / 2);
    }
    gex_Coll_BarrierBlocking(tm, 0);
    gex_AD_Destroy(ad);

    size_t pieces = 2;
    ptrdiff_t offset = 128 - 64;
    if (errors == 0)
        printf("gexheaders.c: rank %u of %u: ok: gasnetex.h-only names; %" PRIuSZ " VIS pieces %" PRIdSZ " bytes apart, segment limits %" PRIuPTR "/%" PRIuPTR "\n",
               (unsigned)me, (unsigned)n, pieces, offset, local, global);
    fflush(stdout);
    int bad = errors;
    gex_Coll_BarrierBlocking(tm, 0);
    gasnet_exit(bad ? 1 : 0);
    return 0;
}
