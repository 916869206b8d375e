/* How a C program ends (argv[1]): "return" returns 3 from main without
 * gasnet_exit on every rank; "one" has rank 1 call gasnet_exit(5) while
 * the others wait in a barrier; "exit" calls exit(4) on every rank;
 * "minus" calls gasnet_exit(-1) on every rank (the job exits 255). The
 * job's exit code must be that code. */
#include <gasnetex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    gex_Client_t c; gex_EP_t ep; gex_TM_t tm;
    const char *mode = argc > 1 ? argv[1] : "return";
    if (gex_Client_Init(&c, &ep, &tm, "EXITTEST", &argc, &argv, 0) != GASNET_OK) return 1;
    gex_Rank_t me = gex_TM_QueryRank(tm);
    printf("exit.c: rank %u: %s\n", (unsigned)me, mode);
    fflush(stdout);
    if (!strcmp(mode, "one")) {
        if (me == 1) gasnet_exit(5);
        gex_Coll_BarrierBlocking(tm, 0);
        printf("exit.c: rank %u passed a barrier rank 1 never entered\n", (unsigned)me);
        return 0;
    }
    gex_Coll_BarrierBlocking(tm, 0);
    if (!strcmp(mode, "exit")) exit(4);
    if (!strcmp(mode, "minus")) gasnet_exit(-1);
    return 3;
}
