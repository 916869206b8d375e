/* Negotiated-payload AMs through the GASNet-EX C API: Prepare/Commit of
 * Medium and Long requests and replies, with a GASNet-allocated buffer
 * and with the client's own, with 0, 3 and 16 arguments, committing fewer
 * bytes than prepared; payloads and arguments checked. Prints one line. */
#include <gasnetex.h>
#include <stdio.h>
#include <string.h>

static gex_TM_t tm;
static gex_Rank_t me, n;
static int errors;
static volatile int got;
static volatile int handled; /* requests whose handler ran */
static gex_AM_Index_t h_mreq, h_mrep, h_lreq, h_lrep;
static char *seg;
#define FAIL(...) do { fprintf(stderr, "npam.c: rank %u: ", (unsigned)me); fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); errors++; } while (0)
#define SLOT 4096

static void fill(unsigned char *b, size_t len, int tag) { for (size_t k = 0; k < len; k++) b[k] = (unsigned char)(k * 7 + tag); }
static int same(const unsigned char *b, size_t len, int tag) { for (size_t k = 0; k < len; k++) if (b[k] != (unsigned char)(k * 7 + tag)) return 0; return 1; }
static char *slot_of(gex_Rank_t owner, gex_Rank_t src, int reply) {
    void *base; gex_EP_QueryBoundSegmentNB(tm, owner, &base, NULL, NULL, 0);
    return (char *)base + ((size_t)src * 2 + reply) * SLOT;
}

/* Medium request with 3 arguments (a, len, tag): reply with a
 * GASNet-allocated buffer of `len` bytes, tag + 1. */
static void mreq(gex_Token_t t, void *buf, size_t nb, gex_AM_Arg_t a, gex_AM_Arg_t len, gex_AM_Arg_t tag) {
    if (a != 42 || (size_t)len != nb || !same(buf, nb, tag)) FAIL("Medium request: a=%d len=%d nb=%zu", (int)a, (int)len, nb);
    gex_AM_SrcDesc_t sd = gex_AM_PrepareReplyMedium(t, NULL, (size_t)len / 2, (size_t)len, NULL, 0, 0);
    if (gex_AM_SrcDescSize(sd) < (size_t)len / 2) FAIL("reply SrcDescSize %zu", gex_AM_SrcDescSize(sd));
    size_t m = gex_AM_SrcDescSize(sd) < (size_t)len ? gex_AM_SrcDescSize(sd) : (size_t)len;
    fill(gex_AM_SrcDescAddr(sd), m, tag + 1);
    gex_AM_CommitReplyMedium0(sd, h_mrep, m);
    handled++;
}
static void mrep(gex_Token_t t, void *buf, size_t nb) {
    (void)t;
    if (nb == 0 || !same(buf, nb, (int)(nb % 50) + 1)) FAIL("Medium reply of %zu bytes", nb);
    got++;
}
/* Long request with 16 arguments 0..15 (arg 0 is the tag): reply with a
 * Long from the client's buffer (the payload itself). */
static void lreq(gex_Token_t t, void *buf, size_t nb, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2,
                 gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7,
                 gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12,
                 gex_AM_Arg_t a13, gex_AM_Arg_t a14, gex_AM_Arg_t a15) {
    gex_AM_Arg_t v[16] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15};
    for (int i = 1; i < 16; i++) if (v[i] != i * 11) FAIL("Long request arg %d = %d", i, (int)v[i]);
    if (!same(buf, nb, a0)) FAIL("Long request payload of %zu bytes", nb);
    gex_Token_Info_t ti; gex_Token_Info(t, &ti, GEX_TI_SRCRANK);
    char *dst = slot_of(ti.gex_srcrank, ti.gex_srcrank, 1);
    gex_Event_t lc;
    gex_AM_SrcDesc_t sd = gex_AM_PrepareReplyLong(t, buf, nb, nb, dst, &lc, 0, 1);
    if (gex_AM_SrcDescAddr(sd) != buf) FAIL("client buffer not used");
    gex_AM_CommitReplyLong1(sd, h_lrep, nb, dst, a0);
    handled++;
}
static void lrep(gex_Token_t t, void *buf, size_t nb, gex_AM_Arg_t tag) {
    (void)t;
    if (buf != slot_of(me, me, 1) || !same(buf, nb, tag)) FAIL("Long reply of %zu bytes", nb);
    got++;
}

int main(int argc, char **argv) {
    gex_Client_t client; gex_EP_t ep; gex_Segment_t segment;
    if (gex_Client_Init(&client, &ep, &tm, "NPAMTEST", &argc, &argv, 0) != GASNET_OK) return 1;
    me = gex_TM_QueryRank(tm); n = gex_TM_QuerySize(tm);
    if (gex_Segment_Attach(&segment, tm, (uintptr_t)n * 2 * SLOT) != GASNET_OK) return 1;
    seg = slot_of(me, 0, 0);
    gex_AM_Entry_t t[4] = {
        {0, mreq, GEX_FLAG_AM_MEDIUM | GEX_FLAG_AM_REQUEST, 3, NULL, "mreq"},
        {0, mrep, GEX_FLAG_AM_MEDIUM | GEX_FLAG_AM_REPLY, 0, NULL, "mrep"},
        {0, lreq, GEX_FLAG_AM_LONG | GEX_FLAG_AM_REQUEST, 16, NULL, "lreq"},
        {0, lrep, GEX_FLAG_AM_LONG | GEX_FLAG_AM_REPLY, 1, NULL, "lrep"},
    };
    if (gex_EP_RegisterHandlers(ep, t, 4) != GASNET_OK) return 1;
    h_mreq = t[0].gex_index; h_mrep = t[1].gex_index; h_lreq = t[2].gex_index; h_lrep = t[3].gex_index;
    size_t lub = gex_AM_MaxRequestMedium(tm, GEX_RANK_INVALID, NULL, GEX_FLAG_AM_PREPARE_LEAST_ALLOC, 3);
    /* What a Long Prepare with client_buf == NULL must allocate: not the
     * Long maximum (a Prepare with that least_payload would allocate it). */
    size_t lubl = gex_AM_MaxRequestLong(tm, GEX_RANK_INVALID, NULL, GEX_FLAG_AM_PREPARE_LEAST_ALLOC, 16);
    size_t lubl_rep = gex_AM_MaxReplyLong(tm, GEX_RANK_INVALID, NULL, GEX_FLAG_AM_PREPARE_LEAST_ALLOC, 1);
    size_t maxl = gex_AM_MaxRequestLong(tm, GEX_RANK_INVALID, NULL, 0, 16);
    if (lubl == 0 || lubl > maxl || lubl != lubl_rep) FAIL("LEAST_ALLOC Long request %zu, reply %zu bytes; the Long maximum is %zu", lubl, lubl_rep, maxl);
    {
        gex_AM_SrcDesc_t sd = gex_AM_PrepareRequestLong(tm, me, NULL, lubl, lubl, NULL, NULL, 0, 16);
        if (gex_AM_SrcDescSize(sd) != lubl || gex_AM_SrcDescAddr(sd) == NULL) FAIL("a Long Prepare of least_payload %zu gave %zu bytes", lubl, gex_AM_SrcDescSize(sd));
        /* Sent with no payload: the handler checks a 0-byte Long. */
        gex_AM_CommitRequestLong16(sd, h_lreq, 0, slot_of(me, me, 0), 0, 11, 22, 33, 44, 55, 66, 77, 88, 99, 110, 121, 132, 143, 154, 165);
        GASNET_BLOCKUNTIL(got == 1);
        got = 0; handled = 0;
    }
    gex_Coll_BarrierBlocking(tm, 0);
    int sent = 0;
    static unsigned char mine[SLOT];
    for (int r = 0; r < 20; r++)
        for (gex_Rank_t d = 0; d < n; d++) {
            int len = 1 + (r * 37 + (int)d * 5) % 1000;
            int tag = len % 50;
            /* Medium request, GASNet-allocated buffer. */
            gex_AM_SrcDesc_t sd = gex_AM_PrepareRequestMedium(tm, d, NULL, (size_t)len, (size_t)len + 100, NULL, 0, 3);
            if (gex_AM_SrcDescSize(sd) < (size_t)len || gex_AM_SrcDescAddr(sd) == NULL) FAIL("Prepare gave %zu bytes", gex_AM_SrcDescSize(sd));
            fill(gex_AM_SrcDescAddr(sd), (size_t)len, tag);
            gex_AM_CommitRequestMedium3(sd, h_mreq, (size_t)len, 42, len, tag);
            /* Long request from the client's buffer, 16 arguments. */
            fill(mine, (size_t)len, tag + 3);
            char *dst = slot_of(d, me, 0);
            sd = gex_AM_PrepareRequestLong(tm, d, mine, 1, (size_t)len, NULL, GEX_EVENT_NOW, 0, 16);
            gex_AM_CommitRequestLong16(sd, h_lreq, (size_t)len, dst, tag + 3, 11, 22, 33, 44, 55, 66, 77, 88, 99, 110, 121, 132, 143, 154, 165);
            sent += 2;
            GASNET_BLOCKUNTIL(got == sent); /* the Long slots are reused */
        }
    /* Every rank sends as many requests to each rank (2 per round), so
     * this rank receives as many as it sent: the errors other ranks'
     * requests record are read only once all have run. */
    GASNET_BLOCKUNTIL(handled == sent);
    if (errors == 0)
        printf("npam.c: rank %u of %u: ok: %d negotiated-payload requests and %d replies (Medium and Long, GASNet and client buffers, 0/1/3/16 arguments); LEAST_ALLOC Medium %zu bytes, Long %zu bytes\n",
               (unsigned)me, (unsigned)n, sent, got, lub, lubl);
    fflush(stdout);
    int bad = errors;
    gex_Coll_BarrierBlocking(tm, 0);
    gasnet_exit(bad ? 1 : 0);
    return 0;
}
