/* AM ping-pong through the GASNet-EX C API: every category (Short, Medium,
 * Long) with every argument count 0..16, each request answered from its
 * handler by a reply of the same category and count; arguments, payloads
 * and gex_Token_Info (with the entry's chosen index) checked at both ends.
 * Also the count-inferred forms, GEX_FLAG_IMMEDIATE, handler-safe locks,
 * a Long of no bytes (its handler gets dest_addr) and the job's segment
 * limit in a GASNet-EX client. Prints one summary line. */
#include <gasnetex.h>
#include <gasnet.h>
#include <gasnet_tools.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SEGSZ (1 << 20)
#define MAXPAY 512

static gex_TM_t tm;
static gex_Rank_t me, n;
static volatile int replies, errors;
static gex_HSL_t lock = GEX_HSL_INITIALIZER;
static gex_AM_Index_t req_idx[3][17], rep_idx[3][17];
static char *seg;

#define FAIL(...) do { fprintf(stderr, "am.c: rank %u: ", (unsigned)me); fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); errors++; } while (0)

/* The argument value i of a message with `na` arguments from `src`. */
static gex_AM_Arg_t argval(int i, int na, gex_Rank_t src) { return (gex_AM_Arg_t)(0x1000 * (i + 1) + 31 * na + (int)src - 7 * i * i); }
static unsigned char payval(size_t k, int na, gex_Rank_t src) { return (unsigned char)(k * 13 + na * 7 + src); }
static size_t paylen(int na) { return (size_t)(na * 29 + 3); }

static void check(gex_Token_t t, int cat, int is_req, int na, const gex_AM_Arg_t *v, void *buf, size_t nbytes) {
    gex_Token_Info_t info;
    gex_TI_t got = gex_Token_Info(t, &info, GEX_TI_ALL);
    if (!(got & GEX_TI_SRCRANK) || !(got & GEX_TI_ENTRY)) { FAIL("gex_Token_Info returned 0x%x", (unsigned)got); return; }
    gex_Rank_t src = is_req ? info.gex_srcrank : me;
    if (info.gex_is_req != is_req) FAIL("gex_is_req %d, want %d", info.gex_is_req, is_req);
    if (info.gex_is_long != (cat == 2)) FAIL("gex_is_long %d for category %d", info.gex_is_long, cat);
    if ((int)(intptr_t)info.gex_entry->gex_cdata != cat * 100 + na) FAIL("gex_cdata %d, want %d", (int)(intptr_t)info.gex_entry->gex_cdata, cat * 100 + na);
    if (info.gex_entry->gex_nargs != (unsigned)na) FAIL("entry nargs %u, want %d", info.gex_entry->gex_nargs, na);
    gex_AM_Index_t idx = is_req ? req_idx[cat][na] : rep_idx[cat][na];
    if (info.gex_entry->gex_index != idx) FAIL("entry index %u, want %u", (unsigned)info.gex_entry->gex_index, (unsigned)idx);
    if (is_req && (gex_Token_MaxReplyMedium(t, NULL, 0, (unsigned)na) < gex_AM_LUBReplyMedium() ||
                   gex_Token_MaxReplyLong(t, NULL, 0, (unsigned)na) < gex_AM_LUBReplyLong()))
        FAIL("gex_Token_MaxReply* below the least upper bounds");
    for (int i = 0; i < na; i++)
        if (v[i] != argval(i, na, src)) FAIL("cat %d nargs %d: arg %d is %d, want %d", cat, na, i, (int)v[i], (int)argval(i, na, src));
    if (cat > 0) {
        if (nbytes != paylen(na)) { FAIL("cat %d nargs %d: %zu payload bytes, want %zu", cat, na, nbytes, paylen(na)); return; }
        for (size_t k = 0; k < nbytes; k++)
            if (((unsigned char *)buf)[k] != payval(k, na, src)) { FAIL("cat %d nargs %d: payload byte %zu differs", cat, na, k); return; }
        if (cat == 2) {
            /* A Long lands in this rank's segment: slot of (sender, kind, nargs). */
            char *want = seg + ((size_t)src * 2 + !is_req) * 17 * MAXPAY + (size_t)na * MAXPAY;
            if ((char *)buf != want) FAIL("Long payload at %p, want %p", buf, (void *)want);
        }
    }
}

static char *long_slot(gex_Rank_t owner, gex_Rank_t src, int reply, int na) {
    void *base; gex_EP_QueryBoundSegmentNB(tm, owner, &base, NULL, NULL, 0);
    return (char *)base + ((size_t)src * 2 + reply) * 17 * MAXPAY + (size_t)na * MAXPAY;
}

static char *seg_of(gex_Rank_t owner) {
    void *base; gex_EP_QueryBoundSegmentNB(tm, owner, &base, NULL, NULL, 0);
    return (char *)base;
}

/* Fill `buf` with what `src` sends for `na` arguments. */
static void fill(unsigned char *buf, int na, gex_Rank_t src) { for (size_t k = 0; k < paylen(na); k++) buf[k] = payval(k, na, src); }

#define P0
#define P1 P0, gex_AM_Arg_t a0
#define P2 P1, gex_AM_Arg_t a1
#define P3 P2, gex_AM_Arg_t a2
#define P4 P3, gex_AM_Arg_t a3
#define P5 P4, gex_AM_Arg_t a4
#define P6 P5, gex_AM_Arg_t a5
#define P7 P6, gex_AM_Arg_t a6
#define P8 P7, gex_AM_Arg_t a7
#define P9 P8, gex_AM_Arg_t a8
#define P10 P9, gex_AM_Arg_t a9
#define P11 P10, gex_AM_Arg_t a10
#define P12 P11, gex_AM_Arg_t a11
#define P13 P12, gex_AM_Arg_t a12
#define P14 P13, gex_AM_Arg_t a13
#define P15 P14, gex_AM_Arg_t a14
#define P16 P15, gex_AM_Arg_t a15
#define V0
#define V1 V0, a0
#define V2 V1, a1
#define V3 V2, a2
#define V4 V3, a3
#define V5 V4, a4
#define V6 V5, a5
#define V7 V6, a6
#define V8 V7, a7
#define V9 V8, a8
#define V10 V9, a9
#define V11 V10, a10
#define V12 V11, a11
#define V13 V12, a12
#define V14 V13, a13
#define V15 V14, a14
#define V16 V15, a15

/* Handlers for N arguments: request handlers check and reply in kind;
 * reply handlers check and count. */
#define HANDLERS(N)                                                                          \
    static void sreq##N(gex_Token_t t P##N) {                                                \
        gex_AM_Arg_t v[] = {0 V##N};                                                         \
        check(t, 0, 1, N, v + 1, NULL, 0);                                                   \
        gex_AM_ReplyShort##N(t, rep_idx[0][N], 0 V##N);                                      \
    }                                                                                        \
    static void srep##N(gex_Token_t t P##N) {                                                \
        gex_AM_Arg_t v[] = {0 V##N};                                                         \
        check(t, 0, 0, N, v + 1, NULL, 0);                                                   \
        replies++;                                                                           \
    }                                                                                        \
    static void mreq##N(gex_Token_t t, void *buf, size_t nb P##N) {                          \
        gex_AM_Arg_t v[] = {0 V##N};                                                         \
        check(t, 1, 1, N, v + 1, buf, nb);                                                   \
        gex_AM_ReplyMedium##N(t, rep_idx[1][N], buf, nb, GEX_EVENT_NOW, 0 V##N);             \
    }                                                                                        \
    static void mrep##N(gex_Token_t t, void *buf, size_t nb P##N) {                          \
        gex_AM_Arg_t v[] = {0 V##N};                                                         \
        check(t, 1, 0, N, v + 1, buf, nb);                                                   \
        replies++;                                                                           \
    }                                                                                        \
    static void lreq##N(gex_Token_t t, void *buf, size_t nb P##N) {                          \
        gex_AM_Arg_t v[] = {0 V##N};                                                         \
        gex_Token_Info_t info;                                                               \
        gex_Token_Info(t, &info, GEX_TI_SRCRANK);                                            \
        check(t, 2, 1, N, v + 1, buf, nb);                                                   \
        gex_Event_t lc;                                                                      \
        gex_AM_ReplyLong##N(t, rep_idx[2][N], buf, nb,                                       \
                            long_slot(info.gex_srcrank, info.gex_srcrank, 1, N), &lc, 0 V##N); \
    }                                                                                        \
    static void lrep##N(gex_Token_t t, void *buf, size_t nb P##N) {                          \
        gex_AM_Arg_t v[] = {0 V##N};                                                         \
        check(t, 2, 0, N, v + 1, buf, nb);                                                   \
        replies++;                                                                           \
    }
HANDLERS(0) HANDLERS(1) HANDLERS(2) HANDLERS(3) HANDLERS(4) HANDLERS(5) HANDLERS(6)
HANDLERS(7) HANDLERS(8) HANDLERS(9) HANDLERS(10) HANDLERS(11) HANDLERS(12)
HANDLERS(13) HANDLERS(14) HANDLERS(15) HANDLERS(16)

#define ALL17(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15) X(16)
#define FN(N) (gex_AM_Fn_t)sreq##N,
static gex_AM_Fn_t sreqs[17] = {ALL17(FN)};
#undef FN
#define FN(N) (gex_AM_Fn_t)srep##N,
static gex_AM_Fn_t sreps[17] = {ALL17(FN)};
#undef FN
#define FN(N) (gex_AM_Fn_t)mreq##N,
static gex_AM_Fn_t mreqs[17] = {ALL17(FN)};
#undef FN
#define FN(N) (gex_AM_Fn_t)mrep##N,
static gex_AM_Fn_t mreps[17] = {ALL17(FN)};
#undef FN
#define FN(N) (gex_AM_Fn_t)lreq##N,
static gex_AM_Fn_t lreqs[17] = {ALL17(FN)};
#undef FN
#define FN(N) (gex_AM_Fn_t)lrep##N,
static gex_AM_Fn_t lreps[17] = {ALL17(FN)};
#undef FN


/* A handler counted by the count-inferred and IMMEDIATE forms. */
static volatile int pokes;
static void poke(gex_Token_t t, gex_AM_Arg_t a, gex_AM_Arg_t b) {
    (void)t;
    if (b != a * 3) FAIL("poke args %d %d", (int)a, (int)b);
    gex_HSL_Lock(&lock);
    pokes++;
    gex_HSL_Unlock(&lock);
}

/* A Long of no bytes: GASNet-EX passes dest_addr to its handler as the
 * initiator gave it, unchecked ("even for the degenerate case when
 * nbytes==0"): a spot in the receiver's segment (where 0), an address in
 * no segment (1, whose handler also replies with a Long of no bytes to
 * another such address), NULL (2). */
#define EMPTY_AT 1000
#define NOWHERE ((char *)(uintptr_t)0x1000)
#define NOWHERE_REPLY ((char *)(uintptr_t)0x2000)
static volatile int empties, empty_replies;
static gex_AM_Index_t empty_rep_idx;
static void empty_long(gex_Token_t t, void *buf, size_t nb, gex_AM_Arg_t where) {
    char *want = where == 0 ? seg + EMPTY_AT : where == 1 ? NOWHERE : NULL;
    if (nb != 0 || buf != want) FAIL("Long of no bytes (case %d): %zu bytes at %p, want 0 at %p", (int)where, nb, buf, (void *)want);
    gex_HSL_Lock(&lock);
    empties++;
    gex_HSL_Unlock(&lock);
    if (where == 1) gex_AM_ReplyLong0(t, empty_rep_idx, NULL, 0, NOWHERE_REPLY, GEX_EVENT_NOW, 0);
}
static void empty_reply(gex_Token_t t, void *buf, size_t nb) {
    (void)t;
    if (nb != 0 || buf != NOWHERE_REPLY) FAIL("reply Long of no bytes: %zu bytes at %p, want 0 at %p", nb, buf, (void *)NOWHERE_REPLY);
    gex_HSL_Lock(&lock);
    empty_replies++;
    gex_HSL_Unlock(&lock);
}

/* Send one request of category `cat` with `na` arguments to `dest`. */
static void send_one(int cat, int na, gex_Rank_t dest) {
    gex_AM_Arg_t a[16];
    for (int i = 0; i < 16; i++) a[i] = argval(i, na, me);
    static unsigned char buf[MAXPAY];
    fill(buf, na, me);
    gex_AM_Index_t h = req_idx[cat][na];
    size_t nb = paylen(na);
    char *dst = long_slot(dest, me, 0, na);
#define ARGS0
#define ARGS1 , a[0]
#define ARGS2 ARGS1, a[1]
#define ARGS3 ARGS2, a[2]
#define ARGS4 ARGS3, a[3]
#define ARGS5 ARGS4, a[4]
#define ARGS6 ARGS5, a[5]
#define ARGS7 ARGS6, a[6]
#define ARGS8 ARGS7, a[7]
#define ARGS9 ARGS8, a[8]
#define ARGS10 ARGS9, a[9]
#define ARGS11 ARGS10, a[10]
#define ARGS12 ARGS11, a[11]
#define ARGS13 ARGS12, a[12]
#define ARGS14 ARGS13, a[13]
#define ARGS15 ARGS14, a[14]
#define ARGS16 ARGS15, a[15]
#define CASE(N)                                                                                  \
    case N:                                                                                      \
        if (cat == 0) gex_AM_RequestShort##N(tm, dest, h, 0 ARGS##N);                            \
        else if (cat == 1) gex_AM_RequestMedium##N(tm, dest, h, buf, nb, GEX_EVENT_NOW, 0 ARGS##N); \
        else gex_AM_RequestLong##N(tm, dest, h, buf, nb, dst, GEX_EVENT_NOW, 0 ARGS##N);         \
        break;
    switch (na) { ALL17(CASE) }
#undef CASE
}

int main(int argc, char **argv) {
    gex_Client_t client; gex_EP_t ep; gex_Segment_t segment;
    if (gex_Client_Init(&client, &ep, &tm, "AMTEST", &argc, &argv, 0) != GASNET_OK) return 1;
    me = gex_TM_QueryRank(tm); n = gex_TM_QuerySize(tm);
    if (me != gex_System_QueryJobRank() || n != gex_System_QueryJobSize()) FAIL("job rank/size differ from the team's");
    if (gex_Segment_Attach(&segment, tm, SEGSZ) != GASNET_OK) return 1;
    void *base; uintptr_t size;
    gex_Event_t qe = gex_EP_QueryBoundSegmentNB(tm, me, &base, NULL, &size, GEX_FLAG_IMMEDIATE);
    if (qe != GEX_EVENT_INVALID || size < SEGSZ) FAIL("own segment query: event %p size %lu", (void *)qe, (unsigned long)size);
    seg = (char *)base;
    if ((size_t)n * 2 * 17 * MAXPAY > SEGSZ) { FAIL("too many ranks for the Long slots"); return 1; }
    if (gex_AM_MaxArgs() != 16) FAIL("gex_AM_MaxArgs %u", gex_AM_MaxArgs());
    if (gex_AM_LUBRequestMedium() < 512 || gex_AM_LUBReplyMedium() < 512 || gex_AM_LUBRequestLong() < 512 || gex_AM_LUBReplyLong() < 512)
        FAIL("an AM LUB is below 512");
    if (gex_AM_MaxRequestMedium(tm, GEX_RANK_INVALID, GEX_EVENT_NOW, 0, 16) < gex_AM_LUBRequestMedium()) FAIL("MaxRequestMedium < LUB");

    /* Requests at fixed indices 128.., replies assigned (index 0). */
    gex_AM_Entry_t table[3 * 17 * 2 + 3];
    gex_AM_Fn_t *reqs[3] = {sreqs, mreqs, lreqs}, *reps[3] = {sreps, mreps, lreps};
    gex_Flags_t cats[3] = {GEX_FLAG_AM_SHORT, GEX_FLAG_AM_MEDIUM, GEX_FLAG_AM_LONG};
    int k = 0;
    for (int c = 0; c < 3; c++)
        for (int na = 0; na <= 16; na++) {
            gex_AM_Entry_t rq = {(gex_AM_Index_t)(128 + c * 17 + na), reqs[c][na], cats[c] | GEX_FLAG_AM_REQUEST, (unsigned)na, (void *)(intptr_t)(c * 100 + na), "request"};
            gex_AM_Entry_t rp = {0, reps[c][na], cats[c] | GEX_FLAG_AM_REPLY, (unsigned)na, (void *)(intptr_t)(c * 100 + na), "reply"};
            table[k++] = rq; table[k++] = rp;
        }
    gex_AM_Entry_t pk = {0, (gex_AM_Fn_t)poke, GEX_FLAG_AM_SHORT | GEX_FLAG_AM_REQREP, 2, NULL, "poke"};
    table[k++] = pk;
    gex_AM_Entry_t el = {0, (gex_AM_Fn_t)empty_long, GEX_FLAG_AM_LONG | GEX_FLAG_AM_REQUEST, 1, NULL, "empty"};
    table[k++] = el;
    gex_AM_Entry_t er = {0, (gex_AM_Fn_t)empty_reply, GEX_FLAG_AM_LONG | GEX_FLAG_AM_REPLY, 0, NULL, "empty reply"};
    table[k++] = er;
    if (gex_EP_RegisterHandlers(ep, table, (size_t)k) != GASNET_OK) return 1;
    k = 0;
    for (int c = 0; c < 3; c++)
        for (int na = 0; na <= 16; na++) {
            req_idx[c][na] = table[k++].gex_index;
            rep_idx[c][na] = table[k++].gex_index;
            if (req_idx[c][na] != 128 + c * 17 + na) FAIL("fixed index changed to %d", req_idx[c][na]);
            if (rep_idx[c][na] < 128) FAIL("assigned index %d", rep_idx[c][na]);
        }
    gex_AM_Index_t poke_idx = table[k].gex_index, empty_idx = table[k + 1].gex_index;
    empty_rep_idx = table[k + 2].gex_index;
    /* Index-0 entries get the highest free index, in table order. */
    if (rep_idx[0][0] != 255 || poke_idx != 255 - 51) FAIL("assigned indices %d and %d, want 255 and 204", rep_idx[0][0], poke_idx);
    gex_Coll_BarrierBlocking(tm, 0);

    int rounds = argc > 1 ? atoi(argv[1]) : 3;
    for (int r = 0; r < rounds; r++) {
        int before = replies;
        for (gex_Rank_t d = 0; d < n; d++)
            for (int c = 0; c < 3; c++)
                for (int na = 0; na <= 16; na++) send_one(c, na, (me + d + (gex_Rank_t)r) % n);
        GASNET_BLOCKUNTIL(replies == before + (int)n * 51);
        gex_Coll_BarrierBlocking(tm, 0); /* the Long slots are reused next round */
    }

    /* Count-inferred forms and IMMEDIATE (retried until accepted). */
    for (gex_Rank_t d = 0; d < n; d++) {
        gex_AM_RequestShort(tm, d, poke_idx, 0, 5, 15);
        while (gex_AM_RequestShort2(tm, d, poke_idx, GEX_FLAG_IMMEDIATE, 7, 21) != 0) gasnet_AMPoll();
    }
    GASNET_BLOCKUNTIL(pokes == 2 * (int)n);
    for (gex_Rank_t d = 0; d < n; d++) {
        gex_AM_RequestLong1(tm, d, empty_idx, NULL, 0, seg_of(d) + EMPTY_AT, GEX_EVENT_NOW, 0, 0);
        gex_AM_RequestLong1(tm, d, empty_idx, NULL, 0, NOWHERE, GEX_EVENT_NOW, 0, 1);
        gex_AM_RequestLong1(tm, d, empty_idx, NULL, 0, NULL, GEX_EVENT_NOW, 0, 2);
    }
    GASNET_BLOCKUNTIL(empties == 3 * (int)n && empty_replies == (int)n);
    /* gasnet_getMaxGlobalSegmentSize answers in a GASNet-EX client too. */
    if (gasnet_getMaxGlobalSegmentSize() < SEGSZ || gasnet_getMaxGlobalSegmentSize() > gasnet_getMaxLocalSegmentSize())
        FAIL("segment limits: global %lu, local %lu", (unsigned long)gasnet_getMaxGlobalSegmentSize(), (unsigned long)gasnet_getMaxLocalSegmentSize());
    gex_Coll_BarrierBlocking(tm, 0);
    if (gex_HSL_Trylock(&lock) != GASNET_OK) FAIL("trylock of a free lock failed");
    if (gex_HSL_Trylock(&lock) == GASNET_OK) FAIL("trylock of a held lock succeeded");
    gex_HSL_Unlock(&lock);

    /* Report before the last barrier: gasnet_exit on one rank ends every
     * rank, including those still inside that barrier. */
    int bad = errors;
    if (bad == 0)
        printf("am.c: rank %u of %u: ok: %d rounds x %u ranks x 3 categories x 0..16 arguments, %d replies checked, %d pokes, %d empty Longs\n",
               (unsigned)me, (unsigned)n, rounds, (unsigned)n, replies, pokes, empties);
    fflush(stdout);
    gex_Coll_BarrierBlocking(tm, 0);
    gasnet_exit(bad ? 1 : 0);
    return 0;
}
