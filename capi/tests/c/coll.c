/* Teams, collectives and atomic domains through the GASNet-EX C API:
 * gex_TM_Split into odd and even ranks (queries and rank translation both
 * ways); gex_Coll_BroadcastNB from every root of the primordial and the
 * split team at 0 B .. 1 MiB; gex_Coll_ReduceToOneNB / ReduceToAllNB for
 * every built-in operator on every built-in type with exact expected
 * results; a non-commutative user operator (2x2 integer matrix products,
 * GEX_OP_USER_NC) checked against the product in team-rank order; both
 * teams running collectives at the same time; a barrier per team;
 * gex_AD_Create over every type with every operation valid for it, each
 * operation checked against its definition; every rank's fetch-and-adds on
 * one word summing exactly; a compare-and-swap lock guarding a plain
 * counter; a domain over the split team, its targets named by team rank
 * and by job rank; a domain created with GEX_FLAG_AD_FAVOR_MY_RANK, on
 * this rank's own word and a shared one; 200 teams split, used and
 * destroyed (gex_TM_Destroy) without the rank's descriptors growing.
 * Prints one line per rank. */
#include <gasnetex.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/resource.h>

static gex_Rank_t me, n;

/* Descriptors this process holds (-1 if /proc cannot say). */
static int open_fds(void) {
    DIR *d = opendir("/proc/self/fd");
    if (!d) return -1;
    int k = 0;
    while (readdir(d)) k++;
    closedir(d);
    return k - 3; /* ".", ".." and the directory's own */
}
static int errors;
#define FAIL(...) do { fprintf(stderr, "coll.c: rank %u: ", (unsigned)me); fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); errors++; } while (0)

/* ---- broadcast ---------------------------------------------------------- */
static void bcast_all_roots(gex_TM_t tm, const char *what) {
    static const size_t sizes[] = {0, 1, 8, 4096, 65536, 1 << 20};
    gex_Rank_t tme = gex_TM_QueryRank(tm), tn = gex_TM_QuerySize(tm);
    unsigned char *src = malloc(1 << 20), *dst = malloc(1 << 20);
    for (gex_Rank_t root = 0; root < tn; root++) {
        for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
            size_t len = sizes[s];
            for (size_t i = 0; i < len; i++) src[i] = (unsigned char)(i * 7 + root * 31 + len);
            memset(dst, 0xee, len);
            gex_Event_t e = gex_Coll_BroadcastNB(tm, root, dst, tme == root ? src : NULL, len, 0);
            if (s % 2) gex_Event_Wait(e);
            else while (gex_Event_Test(e) != GASNET_OK) gasnet_AMPoll();
            for (size_t i = 0; i < len; i++) {
                unsigned char want = (unsigned char)(i * 7 + root * 31 + len);
                if (dst[i] != want) { FAIL("%s broadcast from %u of %zu B: byte %zu is %u, want %u", what, (unsigned)root, len, i, dst[i], want); break; }
            }
        }
    }
    free(src); free(dst);
}

/* ---- reductions: every built-in operator on every type ---------------- */
/* Rank r of the team contributes, for element i, v(r, i). */
#define VAL(r, i) ((int64_t)(((r) * 5 + (i) * 3) % 11) + 1)
#define REDUCE_TYPE(T, DT, ISINT)                                                        \
    do {                                                                                 \
        static const gex_OP_t ops[] = {GEX_OP_ADD, GEX_OP_MULT, GEX_OP_MIN, GEX_OP_MAX,  \
                                       GEX_OP_AND, GEX_OP_OR, GEX_OP_XOR};              \
        enum { CNT = 5 };                                                                \
        for (size_t k = 0; k < sizeof ops / sizeof *ops; k++) {                          \
            if (!(ISINT) && k >= 4) break;                                               \
            T src[CNT], dst[CNT], want[CNT];                                             \
            for (int i = 0; i < CNT; i++) {                                              \
                src[i] = (T)VAL(tme, i);                                                 \
                for (gex_Rank_t r = 0; r < tn; r++) {                                    \
                    T v = (T)VAL(r, i);                                                  \
                    if (r == 0) { want[i] = v; continue; }                               \
                    switch (k) {                                                         \
                    case 0: want[i] = (T)(want[i] + v); break;                           \
                    case 1: want[i] = (T)(want[i] * v); break;                           \
                    case 2: want[i] = v < want[i] ? v : want[i]; break;                  \
                    case 3: want[i] = v > want[i] ? v : want[i]; break;                  \
                    default: want[i] = reduce_bits_##T(k, want[i], v); break;            \
                    }                                                                    \
                }                                                                        \
            }                                                                            \
            gex_Rank_t root = (gex_Rank_t)(k % tn);                                      \
            memset(dst, 0, sizeof dst);                                                  \
            gex_Event_Wait(gex_Coll_ReduceToOneNB(tm, root, dst, src, DT, sizeof(T), CNT, \
                                                  ops[k], NULL, NULL, 0));               \
            if (tme == root && memcmp(dst, want, sizeof dst))                            \
                FAIL("%s reduce to %u of %s with op 0x%x: wrong result", what,          \
                     (unsigned)root, #T, (unsigned)ops[k]);                              \
            memset(dst, 0, sizeof dst);                                                  \
            gex_Event_Wait(gex_Coll_ReduceToAllNB(tm, dst, src, DT, sizeof(T), CNT,      \
                                                  ops[k], NULL, NULL, 0));               \
            if (memcmp(dst, want, sizeof dst))                                           \
                FAIL("%s reduce to all of %s with op 0x%x: wrong result", what, #T,     \
                     (unsigned)ops[k]);                                                  \
            checks++;                                                                    \
        }                                                                                \
    } while (0)

#define BITS(T) static T reduce_bits_##T(size_t k, T a, T b) { \
    return k == 4 ? (T)(a & b) : k == 5 ? (T)(a | b) : (T)(a ^ b); }
typedef float flt; typedef double dbl;
BITS(int32_t) BITS(uint32_t) BITS(int64_t) BITS(uint64_t)
static flt reduce_bits_flt(size_t k, flt a, flt b) { (void)k; (void)b; return a; }
static dbl reduce_bits_dbl(size_t k, dbl a, dbl b) { (void)k; (void)b; return a; }

static int reductions(gex_TM_t tm, const char *what) {
    gex_Rank_t tme = gex_TM_QueryRank(tm), tn = gex_TM_QuerySize(tm);
    int checks = 0;
    REDUCE_TYPE(int32_t, GEX_DT_I32, 1);
    REDUCE_TYPE(uint32_t, GEX_DT_U32, 1);
    REDUCE_TYPE(int64_t, GEX_DT_I64, 1);
    REDUCE_TYPE(uint64_t, GEX_DT_U64, 1);
    REDUCE_TYPE(flt, GEX_DT_FLT, 0);
    REDUCE_TYPE(dbl, GEX_DT_DBL, 0);
    return checks;
}

/* ---- a non-commutative user operator: 2x2 matrix products ------------- */
typedef struct { int64_t a, b, c, d; } mat;
static int calls;
static void matmul(const void *arg1, void *arg2_and_out, size_t count, const void *cdata) {
    const mat *x = arg1; mat *y = arg2_and_out;
    if (cdata != (const void *)&calls) abort();
    for (size_t i = 0; i < count; i++) {
        mat r = {x[i].a * y[i].a + x[i].b * y[i].c, x[i].a * y[i].b + x[i].b * y[i].d,
                 x[i].c * y[i].a + x[i].d * y[i].c, x[i].c * y[i].b + x[i].d * y[i].d};
        y[i] = r;
    }
    calls++;
}
static void add_i64(const void *arg1, void *arg2_and_out, size_t count, const void *cdata) {
    const int64_t *x = arg1; int64_t *y = arg2_and_out;
    if (cdata != (const void *)&calls) abort();
    for (size_t i = 0; i < count; i++) y[i] = x[i] + y[i];
}
static mat mat_of(gex_Rank_t r, int i) { mat m = {1, (int64_t)r + 1, i, 1}; return m; }
static void matrices(gex_TM_t tm, const char *what) {
    gex_Rank_t tme = gex_TM_QueryRank(tm), tn = gex_TM_QuerySize(tm);
    enum { CNT = 3 };
    mat src[CNT], dst[CNT], want[CNT];
    for (int i = 0; i < CNT; i++) {
        src[i] = mat_of(tme, i);
        want[i] = mat_of(0, i);
        for (gex_Rank_t r = 1; r < tn; r++) {
            mat y = mat_of(r, i);
            matmul(&want[i], &y, 1, &calls);
            want[i] = y;
        }
    }
    gex_Event_Wait(gex_Coll_ReduceToAllNB(tm, dst, src, GEX_DT_USER, sizeof(mat), CNT, GEX_OP_USER_NC, matmul, &calls, 0));
    if (memcmp(dst, want, sizeof dst)) FAIL("%s: matrix product not in team-rank order", what);
    memset(dst, 0, sizeof dst);
    gex_Event_Wait(gex_Coll_ReduceToOneNB(tm, tn - 1, dst, src, GEX_DT_USER, sizeof(mat), CNT, GEX_OP_USER_NC, matmul, &calls, 0));
    if (tme == tn - 1 && memcmp(dst, want, sizeof dst)) FAIL("%s: matrix product to one not in team-rank order", what);
}

/* ---- atomics ------------------------------------------------------------ */
#define AD_TYPE(T, DT, SUF, ISINT)                                                          \
    do {                                                                                    \
        static const gex_OP_t all[] = {GEX_OP_SET, GEX_OP_GET, GEX_OP_SWAP, GEX_OP_CAS,     \
            GEX_OP_FCAS, GEX_OP_ADD, GEX_OP_FADD, GEX_OP_SUB, GEX_OP_FSUB, GEX_OP_INC,      \
            GEX_OP_FINC, GEX_OP_DEC, GEX_OP_FDEC, GEX_OP_MULT, GEX_OP_FMULT, GEX_OP_MIN,    \
            GEX_OP_FMIN, GEX_OP_MAX, GEX_OP_FMAX, GEX_OP_AND, GEX_OP_FAND, GEX_OP_OR,       \
            GEX_OP_FOR, GEX_OP_XOR, GEX_OP_FXOR};                                           \
        size_t nops = (ISINT) ? 25 : 19;                                                    \
        gex_OP_t mask = 0;                                                                  \
        for (size_t k = 0; k < nops; k++) mask |= all[k];                                   \
        gex_AD_t ad;                                                                        \
        gex_AD_Create(&ad, tm, DT, mask, 0);                                                \
        if (gex_AD_QueryOps(ad) != mask || gex_AD_QueryDT(ad) != DT || gex_AD_QueryTM(ad) != tm) \
            FAIL("gex_AD_Query* of the %s domain", #T);                                     \
        T *word = (T *)((char *)peer_seg + 64);                                             \
        gex_Rank_t tgt = n - 1;                                                             \
        if (me == 0) {                                                                      \
            for (size_t k = 0; k < nops; k++) {                                             \
                gex_OP_t op = all[k];                                                       \
                T start = (T)6, o1 = (T)2, o2 = (T)9, got = (T)0, now = (T)0, want;         \
                if (op == GEX_OP_CAS || op == GEX_OP_FCAS) o1 = start;                      \
                gex_Event_Wait(gex_AD_OpNB_##SUF(ad, NULL, tgt, word, GEX_OP_SET, start, 0, 0)); \
                int fetching = op == GEX_OP_GET || op == GEX_OP_SWAP || op == GEX_OP_FCAS ||  \
                    (op & (GEX_OP_FADD | GEX_OP_FSUB | GEX_OP_FINC | GEX_OP_FDEC |          \
                           GEX_OP_FMULT | GEX_OP_FMIN | GEX_OP_FMAX | GEX_OP_FAND |         \
                           GEX_OP_FOR | GEX_OP_FXOR));                                      \
                if (k % 2) gex_Event_Wait(gex_AD_OpNB_##SUF(ad, &got, tgt, word, op, o1, o2, 0)); \
                else { gex_AD_OpNBI_##SUF(ad, &got, tgt, word, op, o1, o2, 0); gex_NBI_Wait(GEX_EC_ALL, 0); } \
                gex_Event_Wait(gex_AD_OpNB_##SUF(ad, &now, tgt, word, GEX_OP_GET, 0, 0, 0)); \
                switch (op) {                                                               \
                case GEX_OP_SET: case GEX_OP_SWAP: want = o1; break;                        \
                case GEX_OP_GET: want = start; break;                                       \
                case GEX_OP_CAS: case GEX_OP_FCAS: want = o2; break;                        \
                case GEX_OP_ADD: case GEX_OP_FADD: want = (T)(start + o1); break;           \
                case GEX_OP_SUB: case GEX_OP_FSUB: want = (T)(start - o1); break;           \
                case GEX_OP_INC: case GEX_OP_FINC: want = (T)(start + 1); break;            \
                case GEX_OP_DEC: case GEX_OP_FDEC: want = (T)(start - 1); break;            \
                case GEX_OP_MULT: case GEX_OP_FMULT: want = (T)(start * o1); break;         \
                case GEX_OP_MIN: case GEX_OP_FMIN: want = o1 < start ? o1 : start; break;   \
                case GEX_OP_MAX: case GEX_OP_FMAX: want = o1 > start ? o1 : start; break;   \
                default: want = ad_bits_##SUF(op, start, o1); break;                        \
                }                                                                           \
                if (now != want) FAIL("%s op 0x%x: target holds the wrong value", #T, (unsigned)op); \
                if (fetching && got != start) FAIL("%s op 0x%x: fetched the wrong value", #T, (unsigned)op); \
                checks++;                                                                   \
            }                                                                               \
        }                                                                                   \
        gex_Coll_BarrierBlocking(tm, 0);                                                    \
        gex_AD_Destroy(ad);                                                                 \
    } while (0)

#define ADBITS(T, SUF) static T ad_bits_##SUF(gex_OP_t op, T a, T b) { \
    return (op & (GEX_OP_AND | GEX_OP_FAND)) ? (T)(a & b) : (op & (GEX_OP_OR | GEX_OP_FOR)) ? (T)(a | b) : (T)(a ^ b); }
ADBITS(int32_t, I32) ADBITS(uint32_t, U32) ADBITS(int64_t, I64) ADBITS(uint64_t, U64)
static float ad_bits_FLT(gex_OP_t op, float a, float b) { (void)op; (void)b; return a; }
static double ad_bits_DBL(gex_OP_t op, double a, double b) { (void)op; (void)b; return a; }

static void *peer_seg;

static int atomics(gex_TM_t tm) {
    int checks = 0;
    AD_TYPE(int32_t, GEX_DT_I32, I32, 1);
    AD_TYPE(uint32_t, GEX_DT_U32, U32, 1);
    AD_TYPE(int64_t, GEX_DT_I64, I64, 1);
    AD_TYPE(uint64_t, GEX_DT_U64, U64, 1);
    AD_TYPE(float, GEX_DT_FLT, FLT, 0);
    AD_TYPE(double, GEX_DT_DBL, DBL, 0);
    return checks;
}

int main(int argc, char **argv) {
    gex_Client_t client; gex_EP_t ep; gex_TM_t tm; gex_Segment_t segment;
    if (gex_Client_Init(&client, &ep, &tm, "COLLTEST", &argc, &argv, 0) != GASNET_OK) return 1;
    me = gex_TM_QueryRank(tm); n = gex_TM_QuerySize(tm);
    if (gex_Segment_Attach(&segment, tm, 1 << 16) != GASNET_OK) return 1;
    void *own = NULL;
    gex_Event_Wait(gex_EP_QueryBoundSegmentNB(tm, n - 1, &peer_seg, NULL, NULL, 0));
    gex_Event_Wait(gex_EP_QueryBoundSegmentNB(tm, me, &own, NULL, NULL, 0));

    /* Split into even and odd ranks, ordered by descending job rank. */
    gex_TM_t half;
    if (gex_TM_Split(NULL, tm, 0, 0, NULL, 0, GEX_FLAG_TM_SCRATCH_SIZE_RECOMMENDED) != 0) FAIL("scratch size query");
    gex_TM_Split(&half, tm, (int)(me % 2), -(int)me, NULL, 0, GEX_FLAG_TM_NO_SCRATCH);
    gex_Rank_t hn = (n - me % 2 + 1) / 2, hme = gex_TM_QueryRank(half);
    if (gex_TM_QuerySize(half) != hn) FAIL("split team of %u ranks, want %u", (unsigned)gex_TM_QuerySize(half), (unsigned)hn);
    for (gex_Rank_t r = 0; r < hn; r++) {
        gex_Rank_t j = gex_TM_TranslateRankToJobrank(half, r);
        if (j % 2 != me % 2 || gex_TM_TranslateJobrankToRank(half, j) != r) FAIL("translation of team rank %u", (unsigned)r);
        if (r > 0 && j >= gex_TM_TranslateRankToJobrank(half, r - 1)) FAIL("split order: descending job ranks expected");
    }
    if (gex_TM_TranslateRankToJobrank(half, hme) != me) FAIL("own rank translation");
    if (gex_TM_QueryCData(half) != NULL) FAIL("a new team's client data is not NULL");
    gex_TM_SetCData(half, &calls);
    if (gex_TM_QueryCData(half) != (void *)&calls || gex_TM_QueryCData(tm) == (void *)&calls) FAIL("the split team's client data");
    if (n > 1 && gex_TM_TranslateJobrankToRank(half, (me + 1) % n) != GEX_RANK_INVALID) FAIL("a non-member translated");

    bcast_all_roots(tm, "world");
    bcast_all_roots(half, "half");

    /* In place: src == dst on every rank (ignored off the root). */
    {
        unsigned char ip[4096];
        for (int r = 0; r < (int)n; r++) {
            for (int i = 0; i < 4096; i++) ip[i] = (unsigned char)(me == (gex_Rank_t)r ? i * 5 + r : 0xee);
            gex_Event_Wait(gex_Coll_BroadcastNB(tm, (gex_Rank_t)r, ip, ip, sizeof ip, 0));
            for (int i = 0; i < 4096; i++)
                if (ip[i] != (unsigned char)(i * 5 + r)) { FAIL("in-place broadcast from %d: byte %d is %u", r, i, ip[i]); break; }
        }
        int64_t v[3] = {(int64_t)me, 1, (int64_t)me * (int64_t)me};
        gex_Event_Wait(gex_Coll_ReduceToAllNB(tm, v, v, GEX_DT_I64, 8, 3, GEX_OP_ADD, NULL, NULL, 0));
        int64_t s0 = 0, s2 = 0;
        for (gex_Rank_t r = 0; r < n; r++) { s0 += r; s2 += (int64_t)r * r; }
        if (v[0] != s0 || v[1] != (int64_t)n || v[2] != s2) FAIL("in-place reduce to all: %lld %lld %lld", (long long)v[0], (long long)v[1], (long long)v[2]);
    }

    /* A commutative user operator on a built-in type, over more elements
     * than the collective cache holds (reduced in pieces). */
    {
        enum { BIG = 200000 };
        int64_t *src = malloc(BIG * 8), *dst = malloc(BIG * 8);
        for (int i = 0; i < BIG; i++) src[i] = (int64_t)i * (me + 1);
        gex_Event_Wait(gex_Coll_ReduceToAllNB(tm, dst, src, GEX_DT_I64, 8, BIG, GEX_OP_USER, add_i64, &calls, 0));
        int64_t f = (int64_t)n * (n + 1) / 2;
        for (int i = 0; i < BIG; i++)
            if (dst[i] != (int64_t)i * f) { FAIL("user sum, element %d: %lld, want %lld", i, (long long)dst[i], (long long)i * f); break; }
        free(src); free(dst);
    }

    /* A split given scratch space (handed back by gex_TM_Destroy), with
     * rank 0 taking no part (NULL new_tm_p), then a split of that team. */
    {
        static char scratch_mem[4096];
        gex_TM_t rest = GEX_TM_INVALID;
        gex_TM_Split(me == 0 ? NULL : &rest, tm, 7, 0, scratch_mem, sizeof scratch_mem, 0);
        if (me == 0 && rest != GEX_TM_INVALID) FAIL("rank 0 got a team from a split it took no part in");
        if (me != 0) {
            if (gex_TM_QuerySize(rest) != n - 1 || gex_TM_QueryRank(rest) != me - 1) FAIL("the rest team: size %u rank %u", (unsigned)gex_TM_QuerySize(rest), (unsigned)gex_TM_QueryRank(rest));
            gex_TM_t sub = GEX_TM_INVALID;
            gex_TM_Split(&sub, rest, 0, (int)(n - me), NULL, 0, GEX_FLAG_TM_NO_SCRATCH);
            if (gex_TM_TranslateRankToJobrank(sub, 0) != n - 1) FAIL("split of a split: team rank 0 is job rank %u", (unsigned)gex_TM_TranslateRankToJobrank(sub, 0));
            int64_t one1 = 1, cnt = 0;
            gex_Event_Wait(gex_Coll_ReduceToAllNB(sub, &cnt, &one1, GEX_DT_I64, 8, 1, GEX_OP_ADD, NULL, NULL, 0));
            if (cnt != (int64_t)n - 1) FAIL("split of a split: %lld members", (long long)cnt);
            /* RMA through the team: team rank 0 is job rank n-1. */
            uint32_t word = 0xabc00000u | me, got = 0;
            char *s0;
            gex_Event_Wait(gex_EP_QueryBoundSegmentNB(sub, 0, (void **)&s0, NULL, NULL, 0));
            gex_RMA_PutBlocking(sub, 0, s0 + 1024 + 4 * me, &word, 4, 0);
            gex_RMA_GetBlocking(tm, &got, n - 1, s0 + 1024 + 4 * me, 4, 0);
            if (got != word) FAIL("a put through the split-of-split team landed %x, want %x", got, word);
            gex_Memvec_t none;
            if (gex_TM_Destroy(sub, &none, 0) != 0) FAIL("gex_TM_Destroy of a team without scratch returned non-zero");
            gex_Memvec_t back = {NULL, 0};
            if (gex_TM_Destroy(rest, &back, GEX_FLAG_GLOBALLY_QUIESCED) != 1 || back.gex_addr != scratch_mem || back.gex_len != sizeof scratch_mem)
                FAIL("gex_TM_Destroy did not hand back the scratch space");
        }
        gex_Coll_BarrierBlocking(tm, 0);
    }
    /* gex_TM_Create: pairs of job ranks named in reverse order (a last odd
     * rank names none) with scratch given as a segment offset; every rank
     * but 0, in descending order, named by all (rank 0 joins none); and
     * `half` in reverse, named by ranks of `half`. */
    {
        if (gex_TM_Create(NULL, 0, tm, NULL, 0, NULL, 0, GEX_FLAG_TM_SCRATCH_SIZE_RECOMMENDED) != 0) FAIL("gex_TM_Create scratch size query");
        gex_EP_Location_t pair[2] = {{me | 1u, 0}, {me & ~1u, 0}};
        size_t np = (me | 1u) < n ? 2 : 0;
        gex_Addr_t off = (gex_Addr_t)(uintptr_t)4096;
        gex_TM_t pt = GEX_TM_INVALID;
        gex_TM_Create(&pt, np / 2, tm, pair, np, &off, 512,
                      GEX_FLAG_RANK_IS_JOBRANK | GEX_FLAG_TM_SYMMETRIC_SCRATCH | GEX_FLAG_SCRATCH_SEG_OFFSET);
        if (np) {
            if (gex_TM_QuerySize(pt) != 2 || gex_TM_QueryRank(pt) != (me % 2 ? 0u : 1u) || gex_TM_TranslateRankToJobrank(pt, 0) != (me | 1u))
                FAIL("created pair: size %u rank %u", (unsigned)gex_TM_QuerySize(pt), (unsigned)gex_TM_QueryRank(pt));
            int64_t mine1 = (int64_t)me + 1, sum = 0;
            gex_Event_Wait(gex_Coll_ReduceToAllNB(pt, &sum, &mine1, GEX_DT_I64, 8, 1, GEX_OP_ADD, NULL, NULL, 0));
            if (sum != (int64_t)(me | 1u) + (int64_t)(me & ~1u) + 2) FAIL("created pair: sum %lld", (long long)sum);
            gex_Memvec_t back = {NULL, 0};
            if (gex_TM_Destroy(pt, &back, 0) != 1 || back.gex_addr != (char *)own + 4096 || back.gex_len != 512)
                FAIL("gex_TM_Destroy did not hand back the created pair's scratch space (segment offset 4096)");
        } else if (pt != GEX_TM_INVALID) FAIL("a rank that named no members got a team");
        if (n > 1) {
            gex_EP_Location_t *down = calloc(n - 1, sizeof *down);
            for (gex_Rank_t i = 0; i < n - 1; i++) down[i].gex_rank = n - 1 - i;
            static char local_scratch[1024];
            gex_Addr_t la = local_scratch;
            gex_TM_t dt = GEX_TM_INVALID;
            gex_TM_Create(&dt, me == 0 ? 0 : 1, tm, down, n - 1, &la, sizeof local_scratch, GEX_FLAG_TM_LOCAL_SCRATCH);
            if (me == 0 && dt != GEX_TM_INVALID) FAIL("rank 0 got a team it is not a member of");
            if (me != 0) {
                if (gex_TM_QuerySize(dt) != n - 1 || gex_TM_QueryRank(dt) != n - 1 - me) FAIL("created descending team: size %u rank %u", (unsigned)gex_TM_QuerySize(dt), (unsigned)gex_TM_QueryRank(dt));
                int64_t one1 = 1, cnt = 0;
                gex_Event_Wait(gex_Coll_ReduceToAllNB(dt, &cnt, &one1, GEX_DT_I64, 8, 1, GEX_OP_ADD, NULL, NULL, 0));
                if (cnt != (int64_t)n - 1) FAIL("created descending team: %lld members", (long long)cnt);
                gex_Memvec_t back = {NULL, 0};
                if (gex_TM_Destroy(dt, &back, 0) != 1 || back.gex_addr != local_scratch || back.gex_len != sizeof local_scratch) FAIL("descending team: scratch not handed back");
            }
            free(down);
        }
        gex_EP_Location_t *rev = calloc(hn, sizeof *rev);
        for (gex_Rank_t i = 0; i < hn; i++) rev[i].gex_rank = hn - 1 - i;
        gex_TM_t ht = GEX_TM_INVALID;
        gex_TM_Create(&ht, 1, half, rev, hn, NULL, 0, GEX_FLAG_TM_NO_SCRATCH);
        if (gex_TM_QuerySize(ht) != hn || gex_TM_TranslateRankToJobrank(ht, 0) != gex_TM_TranslateRankToJobrank(half, hn - 1)
            || gex_TM_TranslateRankToJobrank(ht, hn - 1) != gex_TM_TranslateRankToJobrank(half, 0))
            FAIL("half reversed by gex_TM_Create");
        bcast_all_roots(ht, "half reversed");
        gex_Memvec_t none;
        if (gex_TM_Destroy(ht, &none, 0) != 0) FAIL("a created team without scratch handed some back");
        free(rev);
        gex_Coll_BarrierBlocking(tm, 0);
    }
    /* Teams split, used and destroyed in a loop under a descriptor limit
     * 64 above what the rank holds: gex_TM_Destroy releases each team's
     * collective cache (before, every team kept a descriptor and the job
     * ran out within the rounds). */
    {
        enum { ROUNDS = 200 };
        struct rlimit rl;
        int fd0 = open_fds(), fd1 = -1;
        if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && fd0 > 0 && (rlim_t)fd0 + 64 < rl.rlim_cur) {
            rl.rlim_cur = (rlim_t)fd0 + 64;
            setrlimit(RLIMIT_NOFILE, &rl);
        }
        for (int r = 0; r < ROUNDS && !errors; r++) {
            gex_TM_t lt = GEX_TM_INVALID;
            gex_TM_Split(&lt, tm, (int)(me % 2), 0, NULL, 0, GEX_FLAG_TM_NO_SCRATCH);
            gex_Rank_t ln = gex_TM_QuerySize(lt);
            int64_t v = r, s = 0;
            gex_Event_Wait(gex_Coll_ReduceToAllNB(lt, &s, &v, GEX_DT_I64, 8, 1, GEX_OP_ADD, NULL, NULL, 0));
            if (s != (int64_t)r * ln) FAIL("destroy loop, round %d: sum %lld, want %lld", r, (long long)s, (long long)r * ln);
            static char b[4096];
            if (gex_TM_QueryRank(lt) == 0) memset(b, r & 0xff, sizeof b);
            gex_Event_Wait(gex_Coll_BroadcastNB(lt, 0, b, b, sizeof b, 0));
            if (b[0] != (char)(r & 0xff) || b[4095] != (char)(r & 0xff)) FAIL("destroy loop, round %d: broadcast wrong", r);
            gex_Memvec_t none;
            if (gex_TM_Destroy(lt, &none, 0) != 0) FAIL("destroy loop: scratch handed back");
            if (r == 9) fd1 = open_fds();
        }
        if (fd1 >= 0 && open_fds() > fd1) FAIL("destroyed teams kept descriptors: %d after 10 rounds, %d after %d", fd1, open_fds(), ROUNDS);
        gex_Coll_BarrierBlocking(tm, 0);
    }
    int checks = reductions(tm, "world") + reductions(half, "half"), achecks;
    matrices(tm, "world");
    matrices(half, "half");

    /* Both teams at once: a world reduction started, a half one completed
     * meanwhile, then the world one. */
    int64_t one = 1, total = 0, hsum = 0, mine = (int64_t)me + 1;
    gex_Event_t w = gex_Coll_ReduceToAllNB(tm, &total, &one, GEX_DT_I64, 8, 1, GEX_OP_ADD, NULL, NULL, 0);
    gex_Event_Wait(gex_Coll_ReduceToAllNB(half, &hsum, &mine, GEX_DT_I64, 8, 1, GEX_OP_ADD, NULL, NULL, 0));
    gex_Event_Wait(w);
    int64_t hwant = 0;
    for (gex_Rank_t r = me % 2; r < n; r += 2) hwant += (int64_t)r + 1;
    if (total != (int64_t)n || hsum != hwant) FAIL("concurrent teams: %lld / %lld, want %u / %lld", (long long)total, (long long)hsum, (unsigned)n, (long long)hwant);
    gex_Event_Wait(gex_Coll_BarrierNB(half, 0));
    gex_Coll_BarrierBlocking(half, 0);

    achecks = atomics(tm);

    /* Every rank's fetch-and-adds on one word of the last rank's segment. */
    gex_AD_t ad;
    gex_AD_Create(&ad, tm, GEX_DT_U64, GEX_OP_FADD | GEX_OP_GET | GEX_OP_SET | GEX_OP_FCAS | GEX_OP_SET, 0);
    gex_AD_SetCData(ad, &ad);
    if (gex_AD_QueryCData(ad) != (void *)&ad) FAIL("gex_AD_QueryCData");
    uint64_t *counter = (uint64_t *)peer_seg, *lock = counter + 1, *plain = counter + 2;
    if (me == 0) { gex_AD_OpNBI_U64(ad, NULL, n - 1, counter, GEX_OP_SET, 0, 0, 0); gex_AD_OpNBI_U64(ad, NULL, n - 1, lock, GEX_OP_SET, 0, 0, 0); gex_NBI_Wait(GEX_EC_ALL, 0); }
    if (me == 0) { uint64_t z = 0; gex_RMA_PutBlocking(tm, n - 1, plain, &z, 8, 0); }
    gex_Coll_BarrierBlocking(tm, 0);
    enum { ADDS = 2000, LOCKED = 200 };
    static uint64_t fetched; /* outlives the NBI operations */
    for (int i = 0; i < ADDS; i++)
        gex_AD_OpNBI_U64(ad, &fetched, n - 1, counter, GEX_OP_FADD, 1, 0, GEX_FLAG_AD_REL);
    gex_NBI_Wait(GEX_EC_ALL, 0);
    for (int i = 0; i < LOCKED; i++) {
        uint64_t old;
        do gex_Event_Wait(gex_AD_OpNB_U64(ad, &old, n - 1, lock, GEX_OP_FCAS, 0, me + 1, GEX_FLAG_AD_ACQ)); while (old != 0);
        uint64_t v;
        gex_RMA_GetBlocking(tm, &v, n - 1, plain, 8, 0);
        v++;
        gex_RMA_PutBlocking(tm, n - 1, plain, &v, 8, 0);
        gex_Event_Wait(gex_AD_OpNB_U64(ad, &old, n - 1, lock, GEX_OP_FCAS, me + 1, 0, GEX_FLAG_AD_REL));
        if (old != me + 1) FAIL("lock held by %llu at release", (unsigned long long)old);
    }
    gex_Coll_BarrierBlocking(tm, 0);
    uint64_t sum = 0, guarded = 0;
    gex_Event_Wait(gex_AD_OpNB_U64(ad, &sum, n - 1, counter, GEX_OP_GET, 0, 0, 0));
    gex_RMA_GetBlocking(tm, &guarded, n - 1, plain, 8, 0);
    if (sum != (uint64_t)ADDS * n) FAIL("fetch-and-adds sum to %llu, want %llu", (unsigned long long)sum, (unsigned long long)ADDS * n);
    if (guarded != (uint64_t)LOCKED * n) FAIL("the locked counter is %llu, want %llu", (unsigned long long)guarded, (unsigned long long)LOCKED * n);
    gex_Coll_BarrierBlocking(tm, 0);
    gex_AD_Destroy(ad);

    /* A domain over the half team: fetch-and-adds on a word of its team
     * rank 0, named by team rank and (every other one) by job rank. */
    gex_AD_t had;
    gex_AD_Create(&had, half, GEX_DT_I64, GEX_OP_FADD | GEX_OP_GET | GEX_OP_SET, 0);
    if (gex_AD_QueryTM(had) != half) FAIL("gex_AD_QueryTM of the half team's domain");
    char *hseg;
    gex_Event_Wait(gex_EP_QueryBoundSegmentNB(half, 0, (void **)&hseg, NULL, NULL, 0));
    int64_t *hword = (int64_t *)(hseg + 256);
    gex_Rank_t hroot = gex_TM_TranslateRankToJobrank(half, 0);
    if (hme == 0) { gex_AD_OpNBI_I64(had, NULL, 0, hword, GEX_OP_SET, 0, 0, 0); gex_NBI_Wait(GEX_EC_ALL, 0); }
    gex_Coll_BarrierBlocking(half, 0);
    static int64_t hfetched; /* outlives the NBI operations */
    for (int i = 0; i < ADDS; i++) {
        if (i % 2) gex_AD_OpNBI_I64(had, &hfetched, hroot, hword, GEX_OP_FADD, 1, 0, GEX_FLAG_RANK_IS_JOBRANK);
        else gex_AD_OpNBI_I64(had, &hfetched, 0, hword, GEX_OP_FADD, 1, 0, 0);
    }
    gex_NBI_Wait(GEX_EC_ALL, 0);
    gex_Coll_BarrierBlocking(half, 0);
    int64_t hgot = 0;
    gex_Event_Wait(gex_AD_OpNB_I64(had, &hgot, 0, hword, GEX_OP_GET, 0, 0, 0));
    if (hgot != (int64_t)ADDS * hn) FAIL("the half team's fetch-and-adds sum to %lld, want %lld", (long long)hgot, (long long)ADDS * hn);
    gex_Coll_BarrierBlocking(half, 0);
    gex_AD_Destroy(had);
    /* A domain favouring this rank (GEX_FLAG_AD_FAVOR_MY_RANK): ADDS
     * fetch-and-adds on a word of this rank's own segment, then ADDS on one
     * word of the last rank's from every rank; both sums exact. */
    gex_AD_t mad;
    gex_AD_Create(&mad, tm, GEX_DT_U64, GEX_OP_FADD | GEX_OP_GET | GEX_OP_SET, GEX_FLAG_AD_FAVOR_MY_RANK);
    if (gex_AD_QueryFlags(mad) != GEX_FLAG_AD_FAVOR_MY_RANK) FAIL("gex_AD_QueryFlags of the favouring domain");
    uint64_t *oword = (uint64_t *)((char *)own + 16384), *shared = (uint64_t *)((char *)peer_seg + 16392);
    gex_AD_OpNBI_U64(mad, NULL, me, oword, GEX_OP_SET, 0, 0, 0);
    if (me == 0) gex_AD_OpNBI_U64(mad, NULL, n - 1, shared, GEX_OP_SET, 0, 0, 0);
    gex_NBI_Wait(GEX_EC_ALL, 0);
    gex_Coll_BarrierBlocking(tm, 0);
    for (int i = 0; i < ADDS; i++) {
        uint64_t old = 0;
        gex_Event_Wait(gex_AD_OpNB_U64(mad, &old, me, oword, GEX_OP_FADD, 1, 0, 0));
        if (old != (uint64_t)i) { FAIL("own word fetched %llu at add %d", (unsigned long long)old, i); break; }
    }
    for (int i = 0; i < ADDS; i++)
        gex_AD_OpNBI_U64(mad, &fetched, n - 1, shared, GEX_OP_FADD, 1, 0, 0);
    gex_NBI_Wait(GEX_EC_ALL, 0);
    gex_Coll_BarrierBlocking(tm, 0);
    uint64_t msum = 0, mown = 0;
    gex_Event_Wait(gex_AD_OpNB_U64(mad, &msum, n - 1, shared, GEX_OP_GET, 0, 0, 0));
    gex_Event_Wait(gex_AD_OpNB_U64(mad, &mown, me, oword, GEX_OP_GET, 0, 0, 0));
    if (msum != (uint64_t)ADDS * n || mown != ADDS)
        FAIL("favouring domain: shared word %llu (want %llu), own word %llu (want %d)", (unsigned long long)msum, (unsigned long long)ADDS * n, (unsigned long long)mown, ADDS);
    gex_Coll_BarrierBlocking(tm, 0);
    gex_AD_Destroy(mad);
    gex_Memvec_t scratch;
    if (gex_TM_Destroy(half, &scratch, 0) != 0) FAIL("gex_TM_Destroy handed back scratch space never given");
    if (errors == 0)
        printf("coll.c: rank %u of %u: ok: teams, broadcasts, %d reductions, matrix products, %d atomics, locked counter %llu\n",
               (unsigned)me, (unsigned)n, checks, achecks, (unsigned long long)guarded);
    fflush(stdout);
    int bad = errors;
    gex_Coll_BarrierBlocking(tm, 0);
    gasnet_exit(bad ? 1 : 0);
    return 0;
}
