/* Barriers through the GASNet-EX C API: the legacy split-phase barrier
 * before and after the segment is attached, named and anonymous (and
 * mixed), a deliberate mismatch reported to every rank, gasnet_barrier_try
 * polled to completion, gasnet_barrier_result, and gex_Coll_BarrierNB
 * completed through gex_Event_Test / gex_Event_Wait. Prints one line. */
#include <gasnetex.h>
#include <stdio.h>

static gex_Rank_t me, n;
static int errors;
#define FAIL(...) do { fprintf(stderr, "barrier.c: rank %u: ", (unsigned)me); fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); errors++; } while (0)

static void expect(int got, int want, const char *what) {
    if (got != want) FAIL("%s returned %s, want %s", what, gasnet_ErrorName(got), gasnet_ErrorName(want));
}

int main(int argc, char **argv) {
    gex_Client_t client; gex_EP_t ep; gex_TM_t tm; gex_Segment_t segment;
    if (gex_Client_Init(&client, &ep, &tm, "BARRIERTEST", &argc, &argv, 0) != GASNET_OK) return 1;
    me = gex_TM_QueryRank(tm); n = gex_TM_QuerySize(tm);
    int rounds = 0, id;

    /* Before attach: anonymous and named. */
    gasnet_barrier_notify(0, GASNET_BARRIERFLAG_ANONYMOUS);
    expect(gasnet_barrier_wait(0, GASNET_BARRIERFLAG_ANONYMOUS), GASNET_OK, "anonymous wait before attach");
    expect(gasnet_barrier(17, 0), GASNET_OK, "named barrier before attach");
    rounds += 2;
    if (gex_Segment_Attach(&segment, tm, 1 << 16) != GASNET_OK) return 1;

    for (int r = 0; r < 50; r++) {
        /* Named, same id everywhere: result reports it. */
        gasnet_barrier_notify(1000 + r, 0);
        expect(gasnet_barrier_wait(1000 + r, 0), GASNET_OK, "named wait");
        if (gasnet_barrier_result(&id) != 0 || id != 1000 + r) FAIL("barrier_result: id %d, want %d", id, 1000 + r);
        /* Mixed: rank 0 anonymous, the others named: no mismatch. */
        int fl = me == 0 ? GASNET_BARRIERFLAG_ANONYMOUS : 0;
        gasnet_barrier_notify(7, fl);
        int rc;
        while ((rc = gasnet_barrier_try(7, fl)) == GASNET_ERR_NOT_READY) gasnet_AMPoll();
        expect(rc, GASNET_OK, "mixed named/anonymous try");
        if (n > 1 && (gasnet_barrier_result(&id) != 0 || id != 7)) FAIL("mixed barrier_result: id %d, want 7", id);
        /* All anonymous, unnamed flag. */
        expect(gasnet_barrier(0, GASNET_BARRIERFLAG_UNNAMED), GASNET_OK, "unnamed barrier");
        if (gasnet_barrier_result(&id) != GASNET_BARRIERFLAG_ANONYMOUS) FAIL("barrier_result after an anonymous barrier");
        /* New-style: NB event tested, then blocking. */
        gex_Event_t e = gex_Coll_BarrierNB(tm, 0);
        if (r % 2) gex_Event_Wait(e);
        else while (gex_Event_Test(e) != 0) gasnet_AMPoll();
        gex_Coll_BarrierBlocking(tm, 0);
        rounds += 5;
    }
    /* A mismatch: every rank names its own id; with two or more ranks all
     * see GASNET_ERR_BARRIER_MISMATCH. */
    gasnet_barrier_notify((int)me, 0);
    int mm = gasnet_barrier_wait((int)me, 0);
    expect(mm, n > 1 ? GASNET_ERR_BARRIER_MISMATCH : GASNET_OK, "mismatched named wait");
    /* The barrier is usable afterwards. */
    expect(gasnet_barrier(3, 0), GASNET_OK, "named barrier after a mismatch");
    rounds += 2;
    if (errors == 0)
        printf("barrier.c: rank %u of %u: ok: %d barriers (legacy before and after attach, named, anonymous, mixed, try, result, gex NB and blocking); mismatch reported as %s\n",
               (unsigned)me, (unsigned)n, rounds, gasnet_ErrorName(mm));
    fflush(stdout);
    int bad = errors;
    gex_Coll_BarrierBlocking(tm, 0);
    gasnet_exit(bad ? 1 : 0);
    return 0;
}
