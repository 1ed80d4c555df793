#!/usr/bin/env python3
"""An example agent that reports its beliefs to doxascope through ``doxascope_emit``.

It plays a small treasure hunt (seed 000 style): it learns rules, gathers clues, checks each
new claim against what it already believes, revises when a clue contradicts an earlier one,
and answers. A second part runs a tiny BDI loop (seed 004 style) so that every event kind of
the trace format appears once at least; a background thread writes progress logs through
the same emitter to show that an emitter can be shared.

    python3 example_agent.py --out trace.jsonl      # then: doxascope trace.jsonl
    python3 example_agent.py --out "unix:${XDG_RUNTIME_DIR:-$HOME/.cache}/doxascope/live.sock" --session hunt-1
    python3 example_agent.py                        # to standard output
"""

import argparse
import os
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from doxascope_emit import EmitError, Emitter  # noqa: E402  (after the path tweak above)


def treasure_hunt(em):
    """Belief revision with a verification gate: announce, verify, revise, retract."""
    em.announce("treasure_in_a | treasure_in_b", id="r1", role="rule", source="user",
                text="The treasure is in room A or in room B.")
    em.announce("treasure_in_a -> !treasure_in_b", id="r2", role="rule", source="user",
                text="There is only one treasure.")
    em.announce("map_torn -> !trust_map", id="n1", role="norm", source="user",
                text="Never trust a torn map.")
    em.thought("The old map marks room A. I will take it as a working assumption.",
               asserts=["treasure_in_a"])
    em.verify("treasure_in_a", outcome="newinfo", method="sat")
    em.announce("treasure_in_a", id="a1", role="assumption", source="tool:old_map",
                confidence=0.6, text="The old map marks room A.")
    em.query("treasure_in_b", answer="no")
    em.verify("treasure_in_b", outcome="contradiction", because=["a1", "r2"], method="sat")
    em.announce("treasure_in_b", id="f1", source="tool:metal_detector", confidence=0.9,
                text="The metal detector beeps in room B.")
    em.revise(trigger="f1", retracted=["a1"], policy="confidence")
    em.retract("a1", reason="contradicted by a more reliable clue", by="revision")
    em.verify("!treasure_in_a", outcome="entailed", because=["f1", "r2"], method="sat")
    em.answer(text="The treasure is in room B.", formula="treasure_in_b")
    em.world(atoms=["treasure_in_a", "treasure_in_b"], rules=["treasure_in_a | treasure_in_b"],
             truth={"treasure_in_a": False, "treasure_in_b": True})
    em.turn(question="Is the treasure in room B?", reply="YES", literal="treasure_in_b",
            truth="YES")


def bdi_loop(em):
    """A tiny BDI run: beliefs, a desire, an intention, a plan and its steps."""
    em.schema_belief("Shops close at 18:00 on Saturdays.")
    em.desire("Have fresh bread for dinner.")
    em.belief("time", value="16:40", source="clock")
    em.intention("i1", type="buy", goal="bread", satisfaction="bread_at_home",
                 open_parameters=["shop"])
    steps = [
        {"id": "S1", "kind": "fetch", "description": "find an open bakery"},
        {"id": "S2", "kind": "compute", "description": "pick the closest", "deps": ["S1"]},
        {"id": "S3", "kind": "synthesize", "description": "walk there and buy",
         "deps": ["S2"], "post": "bread_at_home"},
    ]
    em.plan("p1", intention_type="buy", context_conditions=["shops_open"], steps=steps,
            origin="library")
    for s in steps:
        em.step("p1", s["id"], status="dispatched")
        em.step("p1", s["id"], status="done", post_met=True,
                new_beliefs=[{"name": "last_step", "value": s["id"]}],
                summary=s["description"] + ": done")
    em.postcondition("p1", "S3", tier=1, ok=True, program="bread_at_home")
    em.satisfaction("i1", ok=True)
    em.review([{"plan": "p1", "action": "keep", "note": "worked first time"}])
    em.plan_stats("p1", use_count=4, success_count=4, failure_count=0)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="-",
                    help="a file, '-' (stdout), unix:PATH or tcp:HOST:PORT (default: -)")
    ap.add_argument("--session", default="example-agent", help="the session name")
    args = ap.parse_args(argv)
    try:
        run(args)
    except EmitError as e:
        # A closed pipe or a viewer that went away: say so instead of a traceback.
        print("example_agent: %s" % e, file=sys.stderr)
        return 1
    return 0


def run(args):
    """Emit the whole example to ``args.out``."""
    with Emitter(args.out, session=args.session) as em:
        em.session(agent="example-agent", model="scripted", meta={"example": "treasure hunt"})

        def heartbeat():
            for i in range(3):
                em.log("heartbeat %d" % (i + 1), level="debug")

        t = threading.Thread(target=heartbeat)
        t.start()
        treasure_hunt(em)
        bdi_loop(em)
        t.join()
        # A gate asks a viewer listening on a socket before committing; in a file it only
        # records that the question was asked (Emitter.gate() waits for an answer, so a file
        # target writes the line itself).
        em.emit("gate", id="g1", formula="treasure_in_a")
        em.score("found_treasure", value=True, explanation="the treasure was where the agent said",
                 source="example")
        em.log("example finished", level="info")


if __name__ == "__main__":
    sys.exit(main())
