/*
 * coll_lat: the Open MPI baseline of scripts/bench-coll.sh.
 *
 * MPI_Bcast (root 0) and MPI_Allreduce (MPI_SUM on uint64_t) latency at
 * 8 bytes and 64 KiB, measured as gex-coll's `lat` mode measures the
 * conduit: a warm-up of a tenth of the count (at least 1), then 5 rounds
 * of COUNT calls each, a barrier before each round; per-call latency =
 * round time / COUNT; rank 0 prints the median of the 5 rounds:
 *
 *   ok: 8 B broadcast X us allreduce Y us, 65536 B broadcast X us allreduce Y us (median of 5 x COUNT)
 *
 * Usage: mpirun -n 4 coll_lat [COUNT]   (default 1000)
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	int rank, count = argc > 1 ? atoi(argv[1]) : 1000;
	const size_t sizes[2] = {8, 65536};
	char line[512];
	size_t at = 0;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (count < 1)
		count = 1;
	at += snprintf(line + at, sizeof line - at, "ok: ");
	for (int s = 0; s < 2; s++) {
		size_t len = sizes[s], n = len / 8;
		uint64_t *buf = calloc(n, 8), *in = calloc(n, 8), *out = calloc(n, 8);
		double tb[5], ta[5];
		for (size_t i = 0; i < n; i++)
			in[i] = 1;
		for (int w = 0; w < count / 10 + 1; w++) {
			MPI_Bcast(buf, (int)len, MPI_BYTE, 0, MPI_COMM_WORLD);
			MPI_Allreduce(in, out, (int)n, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
		}
		for (int r = 0; r < 5; r++) {
			MPI_Barrier(MPI_COMM_WORLD);
			double t = MPI_Wtime();
			for (int i = 0; i < count; i++)
				MPI_Bcast(buf, (int)len, MPI_BYTE, 0, MPI_COMM_WORLD);
			tb[r] = (MPI_Wtime() - t) * 1e6 / count;
			MPI_Barrier(MPI_COMM_WORLD);
			t = MPI_Wtime();
			for (int i = 0; i < count; i++)
				MPI_Allreduce(in, out, (int)n, MPI_UINT64_T, MPI_SUM,
					      MPI_COMM_WORLD);
			ta[r] = (MPI_Wtime() - t) * 1e6 / count;
		}
		qsort(tb, 5, sizeof(double), cmp);
		qsort(ta, 5, sizeof(double), cmp);
		at += snprintf(line + at, sizeof line - at,
			       "%s%zu B broadcast %.2f us allreduce %.2f us",
			       s ? ", " : "", len, tb[2], ta[2]);
		free(buf);
		free(in);
		free(out);
	}
	if (rank == 0)
		printf("%s (median of 5 x %d)\n", line, count);
	MPI_Finalize();
	return 0;
}
