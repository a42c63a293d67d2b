# SPDX-License-Identifier: GPL-2.0
"""Which rank its peers waited for (docs/design.md §4.9), judged against
the simulated NCCL's own record of who arrived when (tools/truth.py's
nccl_report, waited_for_s), not against the rank a scenario starves: a
loaded host starves every rank, and may hold another one back as long.
"""


def waited_for(nccl_truth, nranks=4):
    """{rank: seconds its peers waited for it} from tools/truth.py nccl's
    report (its dict), over the communicators of nranks ranks."""
    late = {}
    for r in nccl_truth["ranks"]:
        if r["nranks"] == nranks:
            late[r["rank"]] = late.get(r["rank"], 0) + r["waited_for_s"]
    return late


def straggler(j, late, want, say):
    """Checks report j's stragglers against late ({rank: seconds}, see
    waited_for) and returns rank want's entry ({} where it has none).
    stragglers[0] must be rank want where the truth names it by 25% over
    the next; the rank the truth names where that is another; one of the
    truth's two latest where they are within 25%.  "# " lines say what the
    truth found; say(ok, what) gives each verdict."""
    order = sorted(late, key=lambda k: -late[k]) + [None, None]
    top, second = order[0], order[1]
    sure = top is not None and (second is None or late[top] >= 1.25 * late[second])
    print("# the truth: peers waited for " + ", ".join(
        "rank %d %.3f s" % (k, late[k]) for k in order if k is not None))
    st = j["stragglers"]
    got = [x["rank"] for x in st]
    if top == want and sure:
        say(got[:1] == [want], "stragglers[0] is rank %d (%s)" % (want, got))
    elif sure:
        print("# the truth names rank %d, not the starved rank %d: the load starved it more"
              % (top, want))
        say(got[:1] == [top], "stragglers[0] is the rank its peers waited for most, %d (%s)"
            % (top, got))
    else:
        print("# the truth's two latest ranks are within 25%: either may lead")
        say(bool(got) and got[0] in order[:2],
            "stragglers[0] is one of the truth's two latest ranks %s (%s)" % (order[:2], got))
    mine = [x for x in st if x["rank"] == want]
    say(bool(mine), "rank %d is among the stragglers (%s)" % (want, got))
    return mine[0] if mine else {}
