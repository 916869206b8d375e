/* Put and get of every form through the GASNet-EX C API, every byte
 * checked: blocking, NB with each local-completion option (NOW, DEFER, an
 * LC event), NBI with NOW, DEFER and GROUP synced by gex_NBI_Wait and
 * polled by gex_NBI_Test, and the event waits (Wait, Test, WaitAll,
 * TestAll, WaitSome, TestSome), at sizes from 0 to 4 MiB, to every rank
 * including this one. Prints one summary line. */
#include <gasnetex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SEGSZ (16u << 20)
#define MAXSZ (4u << 20)

static gex_TM_t tm;
static gex_Rank_t me, n;
static int errors;
static char *myseg;

#define FAIL(...) do { fprintf(stderr, "rma.c: rank %u: ", (unsigned)me); fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); errors++; } while (0)

static unsigned char val(size_t k, unsigned tag) { return (unsigned char)((k * 131 + tag * 17 + (k >> 11)) & 0xff); }
static void fill(unsigned char *b, size_t len, unsigned tag) { for (size_t k = 0; k < len; k++) b[k] = val(k, tag); }
static int same(const unsigned char *b, size_t len, unsigned tag) { for (size_t k = 0; k < len; k++) if (b[k] != val(k, tag)) return 0; return 1; }

/* The address of `off` in `rank`'s segment. */
static char *remote(gex_Rank_t rank, size_t off) {
    void *base; uintptr_t size;
    gex_EP_QueryBoundSegmentNB(tm, rank, &base, NULL, &size, 0);
    if (off > size) FAIL("offset %zu beyond the segment of %lu", off, (unsigned long)size);
    return (char *)base + off;
}

/* Each rank owns a window of SEGSZ/n in every segment; tests write to
 * their window of the target and read it back. */
static size_t window(void) { return SEGSZ / n; }

static const size_t sizes[] = {0, 1, 7, 8, 64, 1000, 4096, 65536, 1u << 20, MAXSZ};

int main(int argc, char **argv) {
    gex_Client_t client; gex_EP_t ep; gex_Segment_t segment;
    if (gex_Client_Init(&client, &ep, &tm, "RMATEST", &argc, &argv, 0) != GASNET_OK) return 1;
    me = gex_TM_QueryRank(tm); n = gex_TM_QuerySize(tm);
    if (gex_Segment_Attach(&segment, tm, SEGSZ) != GASNET_OK) return 1;
    myseg = remote(me, 0);
    unsigned char *src = malloc(MAXSZ), *dst = malloc(MAXSZ);
    int checked = 0;
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        size_t len = sizes[si];
        if (len > window()) continue;
        for (gex_Rank_t k = 0; k < n; k++) {
            gex_Rank_t t = (me + k) % n;
            char *win = remote(t, me * window());
            unsigned tag = (unsigned)(si * 64 + k * 4);
            /* Blocking put, blocking get. */
            fill(src, len, tag);
            gex_RMA_PutBlocking(tm, t, win, src, len, 0);
            memset(dst, 0, len);
            gex_RMA_GetBlocking(tm, dst, t, win, len, 0);
            if (!same(dst, len, tag)) FAIL("blocking put/get of %zu bytes to rank %u", len, (unsigned)t);
            /* NB put: NOW (source reusable at once), DEFER, LC event. */
            fill(src, len, tag + 1);
            gex_Event_t e1 = gex_RMA_PutNB(tm, t, win, src, len, GEX_EVENT_NOW, 0);
            memset(src, 0xee, len);
            gex_Event_Wait(e1);
            gex_Event_t e2 = gex_RMA_GetNB(tm, dst, t, win, len, 0);
            while (gex_Event_Test(e2) != 0) gasnet_AMPoll();
            if (!same(dst, len, tag + 1)) FAIL("NB put (NOW)/NB get of %zu bytes to rank %u", len, (unsigned)t);
            fill(src, len, tag + 2);
            gex_Event_t lc = GEX_EVENT_NO_OP;
            gex_Event_t ev[3];
            ev[0] = gex_RMA_PutNB(tm, t, win, src, len, GEX_EVENT_DEFER, 0);
            gex_Event_WaitAll(ev, 1, 0);
            if (ev[0] != GEX_EVENT_INVALID) FAIL("WaitAll left an event");
            ev[0] = gex_RMA_PutNB(tm, t, win, src, len, &lc, 0);
            gex_Event_Wait(lc);
            gex_Event_Wait(ev[0]);
            ev[0] = gex_RMA_GetNB(tm, dst, t, win, len / 2, 0);
            ev[1] = gex_RMA_GetNB(tm, dst + len / 2, t, win + len / 2, len - len / 2, 0);
            ev[2] = GEX_EVENT_INVALID;
            while (gex_Event_TestAll(ev, 3, 0) != 0) gasnet_AMPoll();
            if (!same(dst, len, tag + 2)) FAIL("NB put (DEFER, LC event)/split gets of %zu bytes to rank %u", len, (unsigned)t);
            ev[0] = gex_RMA_GetNB(tm, dst, t, win, len, 0);
            ev[1] = GEX_EVENT_INVALID;
            gex_Event_WaitSome(ev, 2, 0);
            if (ev[0] != GEX_EVENT_INVALID) FAIL("WaitSome did not complete the only live event");
            ev[0] = gex_RMA_GetNB(tm, dst, t, win, len, 0);
            while (gex_Event_TestSome(ev, 1, 0) != 0) gasnet_AMPoll();
            /* NBI puts (NOW, DEFER, GROUP) in quarters, then NBI gets. */
            fill(src, len, tag + 3);
            size_t q = len / 4;
            gex_RMA_PutNBI(tm, t, win, src, q, GEX_EVENT_NOW, 0);
            gex_RMA_PutNBI(tm, t, win + q, src + q, q, GEX_EVENT_DEFER, 0);
            gex_RMA_PutNBI(tm, t, win + 2 * q, src + 2 * q, len - 2 * q, GEX_EVENT_GROUP, 0);
            /* Synced by waiting, or by testing (which sends aggregated small puts). */
            if ((si + k) & 1)
                gex_NBI_Wait(GEX_EC_PUT, 0);
            else
                while (gex_NBI_Test(GEX_EC_PUT, 0) != 0) gasnet_AMPoll();
            memset(dst, 0, len);
            gex_RMA_GetNBI(tm, dst, t, win, q, 0);
            gex_RMA_GetNBI(tm, dst + q, t, win + q, len - q, 0);
            while (gex_NBI_Test(GEX_EC_GET, 0) != 0) gasnet_AMPoll();
            if (!same(dst, len, tag + 3)) FAIL("NBI puts/gets of %zu bytes to rank %u", len, (unsigned)t);
            gex_RMA_PutNBI(tm, t, win, src, len, GEX_EVENT_DEFER, 0);
            gex_RMA_GetNBI(tm, dst, t, win, len, 0);
            gex_NBI_Wait(GEX_EC_ALL, 0);
            checked += 7;
        }
        gex_Coll_BarrierBlocking(tm, 0);
        /* Every rank's window of this segment holds what it last wrote. */
        for (gex_Rank_t w = 0; w < n; w++) {
            unsigned tag = (unsigned)(si * 64 + ((me + n - w) % n) * 4 + 3);
            if (!same((unsigned char *)myseg + w * window(), len, tag)) FAIL("rank %u's window holds the wrong data after %zu-byte puts", (unsigned)w, len);
        }
        gex_Coll_BarrierBlocking(tm, 0);
    }
    /* The neighbourhood: every member's segment is mapped here (a store
     * through localaddr is what a get from that rank reads); other ranks
     * have no local address. */
    gex_RankInfo_t *nb; gex_Rank_t nbn, nbi;
    gex_System_QueryNbrhdInfo(&nb, &nbn, &nbi);
    if (nbn < 1 || nb[nbi].gex_jobrank != me) FAIL("QueryNbrhdInfo: %u members, mine at %u", (unsigned)nbn, (unsigned)nbi);
    gex_Rank_t nbsets, nbset, hsets, hset;
    gex_System_QueryMyPosition(&nbsets, &nbset, &hsets, &hset);
    if (nbset >= nbsets || hset >= hsets || nbsets < hsets) FAIL("QueryMyPosition: %u/%u, host %u/%u", (unsigned)nbset, (unsigned)nbsets, (unsigned)hset, (unsigned)hsets);
    for (gex_Rank_t t = 0; t < n; t++) {
        void *owner, *local; uintptr_t size;
        gex_EP_QueryBoundSegmentNB(tm, t, &owner, &local, &size, 0);
        int member = 0;
        for (gex_Rank_t i = 0; i < nbn; i++) member |= nb[i].gex_jobrank == t;
        if (member != (local != NULL)) FAIL("rank %u: neighbourhood member %d, local address %p", (unsigned)t, member, local);
        if (local != NULL && t != me) {
            /* A word of my window in t's segment, stored directly. */
            unsigned char *p = (unsigned char *)local + me * window();
            p[0] = (unsigned char)(0xa0 + me);
            unsigned char got = 0;
            gex_RMA_GetBlocking(tm, &got, t, remote(t, me * window()), 1, 0);
            if (got != (unsigned char)(0xa0 + me)) FAIL("a store through rank %u's local address was not what a get read", (unsigned)t);
            checked++;
        }
    }
    /* Value-based puts and gets of 1 to 8 bytes, every form. */
    for (gex_Rank_t k = 0; k < n; k++) {
        gex_Rank_t t = (me + k) % n;
        char *win = remote(t, me * window());
        for (size_t nb = 1; nb <= sizeof(gex_RMA_Value_t); nb++) {
            gex_RMA_Value_t v = 0x8877665544332211ull + (gex_RMA_Value_t)(nb * 16 + k), mask = nb == 8 ? ~(gex_RMA_Value_t)0 : (((gex_RMA_Value_t)1 << (8 * nb)) - 1);
            memset(dst, 0xee, 16);
            gex_RMA_PutBlocking(tm, t, win, dst, 16, 0);
            int form = (int)(nb % 3);
            if (form == 0) gex_RMA_PutBlockingVal(tm, t, win + 1, v, nb, 0);
            else if (form == 1) gex_Event_Wait(gex_RMA_PutNBVal(tm, t, win + 1, v, nb, 0));
            else { gex_RMA_PutNBIVal(tm, t, win + 1, v, nb, 0); gex_NBI_Wait(GEX_EC_PUT, 0); }
            gex_RMA_Value_t got = gex_RMA_GetBlockingVal(tm, t, win + 1, nb, 0);
            if (got != (v & mask)) FAIL("value of %zu bytes to rank %u: got %llx, want %llx", nb, (unsigned)t, (unsigned long long)got, (unsigned long long)(v & mask));
            /* As memory: the integer of nb bytes, and nothing beyond it. */
            gex_RMA_GetBlocking(tm, dst, t, win, 16, 0);
            unsigned char want[16];
            memset(want, 0xee, 16);
            if (nb == 1) { uint8_t x = (uint8_t)v; memcpy(want + 1, &x, 1); }
            else if (nb == 2) { uint16_t x = (uint16_t)v; memcpy(want + 1, &x, 2); }
            else if (nb == 4) { uint32_t x = (uint32_t)v; memcpy(want + 1, &x, 4); }
            else if (nb == 8) { memcpy(want + 1, &v, 8); }
            else { uint64_t x = v & mask; memcpy(want + 1, &x, nb); /* little-endian: the low bytes first */ }
            if (memcmp(dst, want, 16)) FAIL("value of %zu bytes to rank %u: memory differs", nb, (unsigned)t);
            checked++;
        }
    }
    /* An NBI access region: puts of 8 B..64 KiB and gets back, synced by
     * the region's event only (and a region with nothing in it). */
    for (gex_Rank_t k = 0; k < n; k++) {
        gex_Rank_t t = (me + k) % n;
        char *win = remote(t, me * window());
        size_t w = window() < 65536 ? window() : 65536, half = w / 2;
        fill(src, half, 900 + k);
        gex_NBI_BeginAccessRegion(0);
        for (size_t off = 0; off < half; off += 8) gex_RMA_PutNBI(tm, t, win + off, src + off, 8, GEX_EVENT_NOW, 0);
        gex_Event_t e = gex_NBI_EndAccessRegion(0);
        gex_Event_Wait(e);
        memset(dst, 0, half);
        gex_NBI_BeginAccessRegion(0);
        gex_RMA_GetNBI(tm, dst, t, win, half / 2, 0);
        gex_RMA_GetNBI(tm, dst + half / 2, t, win + half / 2, half - half / 2, 0);
        e = gex_NBI_EndAccessRegion(0);
        while (gex_Event_Test(e) != GASNET_OK) gasnet_AMPoll();
        if (!same(dst, half, 900 + k)) FAIL("access region puts/gets to rank %u", (unsigned)t);
        gex_NBI_BeginAccessRegion(0);
        if (gex_NBI_EndAccessRegion(0) != GEX_EVENT_INVALID) FAIL("an empty access region returned an event");
        checked++;
    }
    /* Client data, NULL until set. */
    if (gex_Client_QueryCData(client) || gex_EP_QueryCData(ep) || gex_Segment_QueryCData(segment) || gex_TM_QueryCData(tm))
        FAIL("client data not NULL before it is set");
    gex_Client_SetCData(client, &checked); gex_EP_SetCData(ep, &errors); gex_Segment_SetCData(segment, src); gex_TM_SetCData(tm, dst);
    if (gex_Client_QueryCData(client) != (void *)&checked || gex_EP_QueryCData(ep) != (void *)&errors ||
        gex_Segment_QueryCData(segment) != (void *)src || gex_TM_QueryCData(tm) != (void *)dst)
        FAIL("client data not kept");
    if (errors == 0)
        printf("rma.c: rank %u of %u: ok: %d transfers of 0 B..4 MiB checked (blocking, NB NOW/DEFER/LC, NBI NOW/DEFER/GROUP, value-based, all event waits), neighbourhood of %u\n",
               (unsigned)me, (unsigned)n, checked, (unsigned)nbn);
    fflush(stdout);
    int bad = errors;
    gex_Coll_BarrierBlocking(tm, 0);
    free(src); free(dst);
    gasnet_exit(bad ? 1 : 0);
    return 0;
}
