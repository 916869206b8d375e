/* Barriers in flight together on the primordial team, as GASNet-EX allows
 * ("Multiple collective operations ... may be active concurrently, over
 * multiple teams or over a single team", gex_Coll_BarrierNB included):
 * two and three gex_Coll_BarrierNB before any wait (waited in call order,
 * in reverse order, all at once, and by gex_Event_Test loops), a
 * gex_Coll_BarrierNB then gex_Coll_BarrierBlocking, and world barriers
 * interleaved with barriers of a split team (odd and even ranks). Then the
 * legacy barrier, once every gex barrier is complete.
 *
 * What is checked: no rank leaves barrier k before every rank entered it.
 * Before entering its k-th world barrier a rank writes k into its slot of
 * every rank's segment with a blocking put (complete at the target when it
 * returns); when barrier k's event completes here (or the blocking barrier
 * returns), every slot here must hold at least k. Split-team barriers
 * count the same way in slots written to the team's members. One rank per
 * round is late (it sleeps before entering), so an early exit would be
 * seen. Prints one line. */
#include <gasnetex.h>
#include <gasnet_tools.h>
#include <stdint.h>
#include <stdio.h>

static gex_TM_t tm, half;
static gex_Rank_t me, n, hme, hn;
static int errors, checks;
/* This rank's segment: world[n] then split[n] (indexed by job rank). */
static volatile uint64_t *mine;
static uint64_t wepoch, sepoch; /* barriers this rank entered */
static int late;                /* whether this rank is late this round */

#define FAIL(...) do { fprintf(stderr, "barrier_nb.c: rank %u: ", (unsigned)me); fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); errors++; } while (0)

static uint64_t *slot(gex_Rank_t jobrank, int split, gex_Rank_t writer) {
    void *base;
    gex_Event_Wait(gex_EP_QueryBoundSegmentNB(tm, jobrank, &base, NULL, NULL, 0));
    return (uint64_t *)base + (split ? n : 0) + writer;
}

static void delay(void) {
    if (late) gasnett_nsleep(3 * 1000 * 1000);
}

/* Enter the next world barrier: announce it to every rank; its number. */
static uint64_t enter_world(void) {
    uint64_t k = ++wepoch;
    delay();
    for (gex_Rank_t r = 0; r < n; r++) gex_RMA_PutBlocking(tm, r, slot(r, 0, me), &k, sizeof k, 0);
    return k;
}

/* Enter the next split-team barrier: announce it to the team's members. */
static uint64_t enter_split(void) {
    uint64_t k = ++sepoch;
    delay();
    for (gex_Rank_t r = 0; r < hn; r++) {
        gex_Rank_t j = gex_TM_TranslateRankToJobrank(half, r);
        gex_RMA_PutBlocking(tm, j, slot(j, 1, me), &k, sizeof k, 0);
    }
    return k;
}

/* World barrier k completed here: every rank entered it. */
static void left_world(uint64_t k, const char *what) {
    checks++;
    for (gex_Rank_t r = 0; r < n; r++)
        if (mine[r] < k) FAIL("%s: left world barrier %llu while rank %u had entered only %llu", what, (unsigned long long)k, (unsigned)r, (unsigned long long)mine[r]);
}

static void left_split(uint64_t k, const char *what) {
    checks++;
    for (gex_Rank_t r = 0; r < hn; r++) {
        gex_Rank_t j = gex_TM_TranslateRankToJobrank(half, r);
        if (mine[n + j] < k) FAIL("%s: left split barrier %llu while rank %u had entered only %llu", what, (unsigned long long)k, (unsigned)j, (unsigned long long)mine[n + j]);
    }
}

static void test_until(gex_Event_t e) {
    while (gex_Event_Test(e) != GASNET_OK) gasnet_AMPoll();
}

int main(int argc, char **argv) {
    gex_Client_t client; gex_EP_t ep; gex_Segment_t segment;
    if (gex_Client_Init(&client, &ep, &tm, "BARRIERNBTEST", &argc, &argv, 0) != GASNET_OK) return 1;
    me = gex_TM_QueryRank(tm); n = gex_TM_QuerySize(tm);

    /* Before attach too: two at once. */
    gex_Event_t pre[2] = {gex_Coll_BarrierNB(tm, 0), gex_Coll_BarrierNB(tm, 0)};
    gex_Event_WaitAll(pre, 2, 0);

    if (gex_Segment_Attach(&segment, tm, 1 << 16) != GASNET_OK) return 1;
    mine = slot(me, 0, 0);
    for (gex_Rank_t r = 0; r < 2 * n; r++) mine[r] = 0;
    gex_TM_Split(&half, tm, (int)(me % 2), 0, NULL, 0, GEX_FLAG_TM_NO_SCRATCH);
    hme = gex_TM_QueryRank(half); hn = gex_TM_QuerySize(half);
    (void)hme;
    /* Nobody writes a slot before every rank cleared its own. */
    gex_Coll_BarrierBlocking(tm, 0);

    const int rounds = 20;
    for (int round = 0; round < rounds; round++) {
        late = (gex_Rank_t)(round % n) == me;
        uint64_t k1, k2, k3, s1, s2;
        gex_Event_t e[3], es[2];

        /* Two, waited in call order. */
        k1 = enter_world(); e[0] = gex_Coll_BarrierNB(tm, 0);
        k2 = enter_world(); e[1] = gex_Coll_BarrierNB(tm, 0);
        gex_Event_Wait(e[0]); left_world(k1, "two NB, first");
        gex_Event_Wait(e[1]); left_world(k2, "two NB, second");

        /* Two, the second waited first. */
        k1 = enter_world(); e[0] = gex_Coll_BarrierNB(tm, 0);
        k2 = enter_world(); e[1] = gex_Coll_BarrierNB(tm, 0);
        gex_Event_Wait(e[1]); left_world(k2, "two NB in reverse, second");
        gex_Event_Wait(e[0]); left_world(k1, "two NB in reverse, first");

        /* Three, with WaitAll, or with Test loops from the last. */
        k1 = enter_world(); e[0] = gex_Coll_BarrierNB(tm, 0);
        k2 = enter_world(); e[1] = gex_Coll_BarrierNB(tm, 0);
        k3 = enter_world(); e[2] = gex_Coll_BarrierNB(tm, 0);
        if (round % 2) {
            gex_Event_WaitAll(e, 3, 0); left_world(k3, "three NB, WaitAll");
        } else {
            test_until(e[2]); left_world(k3, "three NB tested, third");
            test_until(e[0]); left_world(k1, "three NB tested, first");
            test_until(e[1]); left_world(k2, "three NB tested, second");
        }

        /* NB then blocking, the NB waited after. */
        k1 = enter_world(); e[0] = gex_Coll_BarrierNB(tm, 0);
        k2 = enter_world(); gex_Coll_BarrierBlocking(tm, 0); left_world(k2, "blocking after NB");
        gex_Event_Wait(e[0]); left_world(k1, "NB before blocking");

        /* Two NB, then blocking, then the NBs. */
        k1 = enter_world(); e[0] = gex_Coll_BarrierNB(tm, 0);
        k2 = enter_world(); e[1] = gex_Coll_BarrierNB(tm, 0);
        k3 = enter_world(); gex_Coll_BarrierBlocking(tm, 0); left_world(k3, "blocking after two NB");
        gex_Event_WaitAll(e, 2, 0); left_world(k2, "two NB before blocking");

        /* World and split-team barriers interleaved. */
        k1 = enter_world(); e[0] = gex_Coll_BarrierNB(tm, 0);
        s1 = enter_split(); es[0] = gex_Coll_BarrierNB(half, 0);
        k2 = enter_world(); e[1] = gex_Coll_BarrierNB(tm, 0);
        s2 = enter_split(); es[1] = gex_Coll_BarrierNB(half, 0);
        gex_Event_Wait(es[1]); left_split(s2, "split NB, second");
        gex_Event_Wait(e[0]); left_world(k1, "world NB between split ones, first");
        gex_Event_Wait(es[0]); left_split(s1, "split NB, first");
        gex_Event_Wait(e[1]); left_world(k2, "world NB between split ones, second");

        /* A world NB across a blocking split barrier and a blocking world
         * barrier. */
        k1 = enter_world(); e[0] = gex_Coll_BarrierNB(tm, 0);
        s1 = enter_split(); gex_Coll_BarrierBlocking(half, 0); left_split(s1, "split blocking inside world NB");
        k2 = enter_world(); gex_Coll_BarrierBlocking(tm, 0); left_world(k2, "world blocking after split blocking");
        gex_Event_Wait(e[0]); left_world(k1, "world NB around blocking ones");
    }

    /* The legacy barrier, now that no gex collective is in flight. */
    int rc = gasnet_barrier(5, 0);
    if (rc != GASNET_OK) FAIL("gasnet_barrier after the gex barriers: %s", gasnet_ErrorName(rc));
    uint64_t k = enter_world();
    gasnet_barrier_notify(0, GASNET_BARRIERFLAG_ANONYMOUS);
    rc = gasnet_barrier_wait(0, GASNET_BARRIERFLAG_ANONYMOUS);
    if (rc != GASNET_OK) FAIL("legacy wait: %s", gasnet_ErrorName(rc));
    left_world(k, "legacy barrier");
    gex_Event_t last = gex_Coll_BarrierNB(tm, 0);
    gex_Event_Wait(last);

    if (errors == 0)
        printf("barrier_nb.c: rank %u of %u: ok: %llu world and %llu split barriers, %d checks: concurrent NB barriers leave in order\n",
               (unsigned)me, (unsigned)n, (unsigned long long)wepoch, (unsigned long long)sepoch, checks);
    fflush(stdout);
    int bad = errors;
    gex_Coll_BarrierBlocking(tm, 0);
    gasnet_exit(bad ? 1 : 0);
    return 0;
}
