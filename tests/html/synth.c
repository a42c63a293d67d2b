// SPDX-License-Identifier: GPL-2.0
/*
 * html_synth OUT SECONDS NDEV: the --html page of SECONDS of synthetic
 * GPU time on NDEV devices, every state in every stretch of 20 ms (busy,
 * a wait for peers inside it, an idle gap with time from every cause,
 * unresolved), fed to the page's observer as the engine would; prints
 * the page's size (tests/html.t: the bound on a long run's page).
 */
#include <stdio.h>
#include <stdlib.h>
#include "engine/engine.h"
#include "engine/names.h"
#include "views/html.h"

#define ROUND_NS	20000000ull

static void round_of(struct ig_engine_obs *o, int dev, uint64_t t)
{
	struct ig_obs_cause all[IG_C__MAX];
	struct ig_obs_span s = { .kind = IG_OBS_BUSY, .device = dev, .t0 = t,
				 .t1 = t + 4000000 };
	unsigned int c;

	o->span(o->ctx, &s);
	s = (struct ig_obs_span){ .kind = IG_OBS_IDLE, .device = dev, .t0 = t + 4000000,
				  .t1 = t + 4000000 + IG_C__MAX * 1000000ull };
	for (c = 0; c < IG_C__MAX; c++)
		all[c] = (struct ig_obs_cause){ .name = ig_names_cause(c), .ns = 1000000 };
	s.all = all;
	s.nall = IG_C__MAX;
	o->span(o->ctx, &s);
	s = (struct ig_obs_span){ .kind = IG_OBS_UNRES, .device = dev, .t0 = s.t1,
				  .t1 = t + ROUND_NS };
	o->span(o->ctx, &s);
	s = (struct ig_obs_span){ .kind = IG_OBS_COLLECTIVE, .device = dev, .t0 = t,
				  .t1 = t + 3000000, .wait_until = t + 1000000,
				  .rank = dev, .late_rank = -1 };
	o->span(o->ctx, &s);
}

int main(int argc, char **argv)
{
	struct ig_engine_opts eo = { .sz = sizeof(eo) };
	struct ig_html_stats st;
	struct ig_engine_obs o;
	struct ig_engine *e;
	struct ig_html *h;
	uint64_t t, end;
	int dev, ndev, err;
	FILE *f;

	if (argc != 4) {
		fprintf(stderr, "usage: html_synth OUT SECONDS NDEV\n");
		return 2;
	}
	end = 1000000000ull + (uint64_t)(atof(argv[2]) * 1e9);
	ndev = atoi(argv[3]);
	e = ig_engine_new(&eo);
	h = ig_html_new();
	f = fopen(argv[1], "w");
	if (!e || !h || !f) {
		perror("html_synth");
		return 1;
	}
	ig_html_observer(h, &o);
	for (t = 1000000000ull; t < end; t += ROUND_NS)
		for (dev = 0; dev < ndev; dev++)
			round_of(&o, dev, t);
	ig_engine_finish(e);
	err = ig_html_write(h, e, f, &st);
	if (fclose(f) || err) {
		fprintf(stderr, "html_synth: cannot write %s\n", argv[1]);
		return 1;
	}
	printf("bytes=%llu data=%llu devices=%u\n", (unsigned long long)st.bytes,
	       (unsigned long long)st.data_bytes, st.devices);
	ig_html_free(h);
	ig_engine_free(e);
	return 0;
}
