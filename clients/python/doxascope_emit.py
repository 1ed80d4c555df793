"""Write doxascope trace events (trace format v1) from a Python agent.

One module, standard library only. Copy it next to your agent or put this directory on
``sys.path``::

    from doxascope_emit import Emitter

    with Emitter("run.jsonl", session="my-agent") as em:
        em.session(agent="my-agent", model="gpt-4.1-mini")
        em.announce("rain -> wet", id="r1", role="rule", source="user")
        em.announce("rain", id="f1", source="tool:weather")
        em.verify("wet", outcome="entailed", because=["r1", "f1"], method="sat")

Then watch it with ``doxascope run.jsonl`` or check it with ``doxascope validate run.jsonl``.

Targets
    ``"path/to/file.jsonl"``  a file (created, or appended to with ``append=True``);
    ``"-"``                   standard output;
    ``"unix:/path/sock"``     a doxascope ``--listen unix:/path/sock`` socket;
    ``"tcp:127.0.0.1:7070"``  a doxascope ``--listen tcp:127.0.0.1:7070`` socket;
    any object with ``write(str)`` (and optionally ``flush()``).

Every event is one JSON object on one line, written and flushed (or sent) as a whole while a
lock is held, so several threads may share one emitter: lines never interleave, and ``seq``
increases in the order lines are written. Each line carries ``kind``, ``seq`` (1, 2, ... per
emitter), ``ts`` (RFC 3339 UTC with milliseconds, never going backwards) and ``session``
(when one was given). Fields whose value is ``None`` are left out, so the viewer applies the
format's defaults (role ``fact``, confidence 1, ...).

There is one method per event kind of the format, named after the kind, with the format's
field names as keyword arguments; extra keyword arguments become extra fields, which
doxascope keeps and shows. :meth:`Emitter.emit` writes any kind, including your own.
Values the format restricts (roles, outcomes, replies, statuses, ...) are checked before
anything is written and a wrong one raises :class:`ValueError`, so a typo fails in your
agent rather than as a warning in the viewer.
"""

import datetime
import json
import math
import socket
import sys
import threading

__all__ = ["Emitter", "EmitError", "FORMAT_VERSION", "KINDS"]

#: The trace format version this module writes.
FORMAT_VERSION = 1

#: Every event kind of trace format v1.
KINDS = (
    "session", "announce", "retract", "verify", "revise", "query", "answer", "thought",
    "world", "turn", "belief", "schema_belief", "desire", "intention", "plan", "step",
    "postcondition", "satisfaction", "review", "plan_stats", "log", "score", "gate",
)

_ROLES = ("fact", "rule", "norm", "assumption")
_RETRACT_BY = ("agent", "revision", "user")
_OUTCOMES = ("contradiction", "entailed", "newinfo", "ungrounded")
_ANSWERS = ("yes", "no", "unknown")
_REPLIES = ("YES", "NO", "UNKNOWN")
_STATUSES = ("dispatched", "done", "failed")
_ORIGINS = ("generated", "library")
_ACTIONS = ("keep", "refine", "remove")


class EmitError(OSError):
    """Writing or sending an event failed (the file or the connection is gone)."""


def _check(name, value, allowed):
    if value is not None and value not in allowed:
        raise ValueError("%s must be one of %s, got %r" % (name, ", ".join(allowed), value))


def _json_default(value):
    # Sets and tuples are lists in JSON; anything else unknown is shown as its text rather
    # than crashing the agent over a log line.
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    return str(value)


class Emitter:
    """Writes trace events to one target. Thread-safe; usable as a context manager."""

    def __init__(self, target, session=None, append=False, errors="raise"):
        """Open ``target`` (see the module documentation).

        ``session`` names the session written on every line; without it the viewer uses the
        file name (or the connection). ``append`` appends to an existing file instead of
        truncating it. ``errors`` is ``"raise"`` (a failed write raises :class:`EmitError`)
        or ``"count"`` (failed events are counted in :attr:`dropped` and the agent goes on).
        """
        if errors not in ("raise", "count"):
            raise ValueError("errors must be 'raise' or 'count'")
        self._lock = threading.Lock()
        self._seq = 0
        self._last_ts = None
        self._errors = errors
        self._sock = None
        self._file = None
        self._owns_file = False
        #: Events that could not be written (only with ``errors="count"``).
        self.dropped = 0
        self._gate_lock = threading.Lock()
        self._gates = 0
        self._rbuf = b""
        #: The session name written on every event, or ``None``.
        self.session_name = session
        if hasattr(target, "write"):
            self._file = target
        elif not isinstance(target, str):
            raise TypeError("target must be a path, '-', 'unix:PATH', 'tcp:HOST:PORT' or a file")
        elif target == "-":
            self._file = sys.stdout
        elif target.startswith("unix:"):
            path = target[len("unix:"):]
            if not hasattr(socket, "AF_UNIX"):
                raise EmitError("unix sockets are not available on this platform")
            self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self._connect(path, target)
        elif target.startswith("tcp:"):
            host, sep, port = target[len("tcp:"):].rpartition(":")
            if not sep or not port.isdigit():
                raise ValueError("expected tcp:HOST:PORT, got %r" % target)
            host = host.strip("[]") or "127.0.0.1"
            try:
                self._sock = socket.create_connection((host, int(port)))
            except OSError as e:
                raise EmitError("cannot connect to %s: %s" % (target, e)) from e
        else:
            self._file = open(target, "a" if append else "w", encoding="utf-8", newline="\n")
            self._owns_file = True

    def _connect(self, path, target):
        try:
            self._sock.connect(path)
        except OSError as e:
            self._sock.close()
            raise EmitError("cannot connect to %s: %s" % (target, e)) from e

    # -- plumbing -------------------------------------------------------------------------

    def _timestamp(self):
        now = datetime.datetime.now(datetime.timezone.utc)
        now = now.replace(microsecond=now.microsecond // 1000 * 1000)
        # The wall clock may step back (NTP); the format wants ts non-decreasing per session.
        if self._last_ts is not None and now < self._last_ts:
            now = self._last_ts
        self._last_ts = now
        return now.isoformat(timespec="milliseconds").replace("+00:00", "Z")

    def emit(self, kind, **fields):
        """Write one event of any ``kind`` with ``fields``; returns the object written.

        ``None`` values are left out. ``seq``, ``ts`` and ``session`` are filled in unless
        given. Floats must be finite (JSON has no NaN or infinity).
        """
        if not isinstance(kind, str) or not kind:
            raise ValueError("kind must be a non-empty string")
        body = {k: v for k, v in fields.items() if v is not None}
        for k, v in body.items():
            if isinstance(v, float) and not math.isfinite(v):
                raise ValueError("field %r is %r; JSON numbers must be finite" % (k, v))
        with self._lock:
            self._seq += 1
            obj = {"kind": kind, "seq": body.pop("seq", self._seq)}
            obj["ts"] = body.pop("ts", None) or self._timestamp()
            session = body.pop("session", self.session_name)
            if session is not None:
                obj["session"] = session
            obj.update(body)
            line = json.dumps(
                obj, ensure_ascii=False, separators=(",", ":"), default=_json_default,
                allow_nan=False,
            ) + "\n"
            self._write(line)
        return obj

    def _write(self, line):
        try:
            if self._sock is not None:
                self._sock.sendall(line.encode("utf-8"))
            elif self._file is not None:
                self._file.write(line)
                flush = getattr(self._file, "flush", None)
                if flush is not None:
                    flush()
            else:
                raise EmitError("the emitter is closed")
        except (OSError, ValueError) as e:
            if self._errors == "count":
                self.dropped += 1
                return
            if isinstance(e, EmitError):
                raise
            raise EmitError("cannot write the event: %s" % e) from e

    def close(self):
        """Flush and close the target (a file object passed in is flushed, not closed)."""
        with self._lock:
            if self._sock is not None:
                try:
                    self._sock.shutdown(socket.SHUT_WR)
                except OSError:
                    pass
                self._sock.close()
                self._sock = None
            if self._file is not None:
                if self._owns_file:
                    self._file.close()
                else:
                    flush = getattr(self._file, "flush", None)
                    if flush is not None:
                        flush()
                self._file = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    # -- epistemic events (seeds 000, 001, 003) -------------------------------------------

    def session(self, agent=None, model=None, meta=None, **extra):
        """``session``: who writes the trace: the agent, its model, free-form ``meta``."""
        return self.emit("session", agent=agent, model=model, meta=meta, **extra)

    def announce(self, formula, id=None, source=None, role=None, confidence=None,
                 because=None, text=None, **extra):
        """``announce``: add ``formula`` (doxascope formula syntax) to the belief set Σ.

        ``id`` defaults to the normalized formula in the viewer; ``role`` is ``fact``
        (default), ``rule``, ``norm`` or ``assumption``; ``confidence`` in (0, 1]; ``because``
        lists the ids of the premises; ``text`` is the natural-language original.
        """
        _check("role", role, _ROLES)
        if confidence is not None and not 0 < confidence <= 1:
            raise ValueError("confidence must be greater than 0 and at most 1, got %r" % (confidence,))
        return self.emit("announce", formula=formula, id=id, source=source, role=role,
                         confidence=confidence, because=because, text=text, **extra)

    def retract(self, target, reason=None, by=None, **extra):
        """``retract``: ``target`` (a belief id or formula) leaves Σ; ``by`` is ``agent``,
        ``revision`` or ``user``."""
        _check("by", by, _RETRACT_BY)
        return self.emit("retract", target=target, reason=reason, by=by, **extra)

    def verify(self, formula=None, formulas=None, outcome=None, because=None, method=None,
               tier=None, detail=None, **extra):
        """``verify``: the agent's verification gate on ``formula`` (or ``formulas``) and the
        ``outcome`` it claims: ``contradiction``, ``entailed``, ``newinfo`` or
        ``ungrounded``."""
        if formula is None and not formulas:
            raise ValueError("verify needs formula or formulas")
        _check("outcome", outcome, _OUTCOMES)
        return self.emit("verify", formula=formula, formulas=formulas, outcome=outcome,
                         because=because, method=method, tier=tier, detail=detail, **extra)

    def revise(self, trigger=None, retracted=None, policy=None, **extra):
        """``revise``: a revision after a contradiction: what triggered it, which ids or
        formulas were given up, under which policy."""
        return self.emit("revise", trigger=trigger, retracted=retracted, policy=policy,
                         **extra)

    def query(self, formula, answer=None, **extra):
        """``query``: a QUERY the agent put to its solver; ``answer`` is ``yes``, ``no`` or
        ``unknown``."""
        _check("answer", answer, _ANSWERS)
        return self.emit("query", formula=formula, answer=answer, **extra)

    def gate(self, formula, id=None, because=None, timeout=10.0, **extra):
        """``gate``: ask the viewer Θ(Σ, φ) *before* committing to ``formula``, and wait for
        its answer (only on a ``unix:`` or ``tcp:`` target, to a doxascope listening there).

        Returns the reply as a dict: ``outcome`` (``contradiction``, ``entailed``,
        ``newinfo`` or ``ungrounded``), ``conflict`` (ids of a minimal subset of Σ that
        contradicts φ), ``repairs`` (each a minimal list of ids whose retraction would make
        room for φ), ``reply_to`` (the gate's ``id``; one is made up when not given), or
        ``error`` when the formula cannot be checked. ``because`` cites premises. Raises
        :class:`EmitError` when the target is not a socket or no answer comes within
        ``timeout`` seconds. Several threads may gate at once: gates are asked one at a time.
        """
        if self._sock is None:
            raise EmitError("gate needs a unix: or tcp: target (the viewer answers on it)")
        with self._gate_lock:
            if id is None:
                self._gates += 1
                id = "gate-%d" % self._gates
            self.emit("gate", id=id, formula=formula, because=because, **extra)
            reply = self._read_reply(timeout)
        if reply.get("reply_to") != id:
            raise EmitError("the viewer answered %r, not gate %r" % (reply.get("reply_to"), id))
        return reply

    def _read_reply(self, timeout):
        sock = self._sock
        if sock is None:
            raise EmitError("the emitter is closed")
        sock.settimeout(timeout)
        try:
            while b"\n" not in self._rbuf:
                chunk = sock.recv(65536)
                if not chunk:
                    raise EmitError("the viewer closed the connection before answering")
                self._rbuf += chunk
        except socket.timeout as e:
            raise EmitError("no answer to the gate within %s s" % timeout) from e
        except OSError as e:
            if isinstance(e, EmitError):
                raise
            raise EmitError("cannot read the gate's answer: %s" % e) from e
        finally:
            try:
                sock.settimeout(None)
            except OSError:
                pass
        line, _, self._rbuf = self._rbuf.partition(b"\n")
        try:
            return json.loads(line.decode("utf-8"))
        except ValueError as e:
            raise EmitError("the viewer's answer is not JSON: %r" % line[:200]) from e

    def answer(self, text=None, formula=None, hedged=None, **extra):
        """``answer``: an ANSWER the agent gave, in words and as a formula; ``hedged=True``
        marks a guess or opinion (the audit then does not require Σ to entail it)."""
        if hedged is not None and not isinstance(hedged, bool):
            raise ValueError("hedged must be True or False")
        return self.emit("answer", text=text, formula=formula, hedged=hedged, **extra)

    def thought(self, text=None, asserts=None, **extra):
        """``thought``: a chain-of-thought step and the formulas it asserts."""
        return self.emit("thought", text=text, asserts=asserts, **extra)

    def world(self, atoms=None, rules=None, truth=None, **extra):
        """``world``: a synthetic propositional world (seed 003): atoms, rules (formulas),
        truth (atom -> bool)."""
        return self.emit("world", atoms=atoms, rules=rules, truth=truth, **extra)

    def turn(self, question=None, reply=None, literal=None, truth=None, **extra):
        """``turn``: one dialogue turn: the question, the ``reply`` (``YES``, ``NO``,
        ``UNKNOWN``), the literal it commits to and the true answer."""
        _check("reply", reply, _REPLIES)
        return self.emit("turn", question=question, reply=reply, literal=literal,
                         truth=truth, **extra)

    # -- BDI events (seed 004) ------------------------------------------------------------

    def belief(self, name, value=None, unit=None, source=None, **extra):
        """``belief``: a ground belief, upserted by ``name``."""
        return self.emit("belief", name=name, value=value, unit=unit, source=source, **extra)

    def schema_belief(self, text, **extra):
        """``schema_belief``: a general belief, as text."""
        return self.emit("schema_belief", text=text, **extra)

    def desire(self, text, **extra):
        """``desire``: what the agent wants, as text."""
        return self.emit("desire", text=text, **extra)

    def intention(self, id, type=None, goal=None, satisfaction=None, open_parameters=None,
                  files=None, **extra):
        """``intention``: the intention pursued (``id``), its ``type``, goal, satisfaction
        condition and open parameters; ``files``: the local files the task names (the audit
        reports a task whose file no step read with a ``read_file`` tool)."""
        if files is not None and (isinstance(files, str)
                                  or not all(isinstance(f, str) for f in files)):
            raise ValueError("files must be a list of strings")
        return self.emit("intention", id=id, type=type, goal=goal, satisfaction=satisfaction,
                         open_parameters=open_parameters, files=files, **extra)

    def plan(self, id, intention_type=None, context_conditions=None, steps=None, origin=None,
             **extra):
        """``plan``: a plan DAG. ``steps`` are dicts with ``id`` (required), ``kind``
        (``fetch``, ``compute``, ``synthesize``, ...), ``description``, ``deps``, ``post``,
        and for a computation ``compute`` (the arithmetic over ground-belief names, which the
        audit recomputes, e.g. ``"numerator / denominator"``) and ``output`` (the belief
        the result goes to); ``origin`` is ``generated`` or ``library``."""
        _check("origin", origin, _ORIGINS)
        for s in steps or ():
            if not isinstance(s, dict) or "id" not in s:
                raise ValueError("every plan step must be a dict with an 'id'")
            for k in ("compute", "output"):
                if k in s and not isinstance(s[k], str):
                    raise ValueError("a plan step's %r must be a string" % k)
        return self.emit("plan", id=id, intention_type=intention_type,
                         context_conditions=context_conditions, steps=steps, origin=origin,
                         **extra)

    def step(self, plan, step, status=None, post_met=None, new_beliefs=None, summary=None,
             tool_calls=None, inputs=None, **extra):
        """``step``: progress of a plan step: ``status`` (``dispatched``, ``done``,
        ``failed``), the self-reported ``post_met``, ``new_beliefs`` (dicts shaped like
        :meth:`belief` arguments), a summary (``FINAL ANSWER: v`` in it is the answer
        emitted), ``tool_calls`` (dicts with ``tool`` and optionally ``args``, ``result``,
        ``error``) and ``inputs`` (a dict: the values the step computed from)."""
        _check("status", status, _STATUSES)
        for b in new_beliefs or ():
            if not isinstance(b, dict) or "name" not in b:
                raise ValueError("every new belief must be a dict with a 'name'")
        for c in tool_calls or ():
            if not isinstance(c, dict) or not isinstance(c.get("tool"), str):
                raise ValueError("every tool call must be a dict with a 'tool' name")
        if inputs is not None and not isinstance(inputs, dict):
            raise ValueError("inputs must be a dict of name -> value")
        return self.emit("step", plan=plan, step=step, status=status, post_met=post_met,
                         new_beliefs=new_beliefs, summary=summary, tool_calls=tool_calls,
                         inputs=inputs, **extra)

    def postcondition(self, plan, step, tier=None, ok=None, failure_mode=None, program=None,
                      detail=None, **extra):
        """``postcondition``: a check of a step's postcondition at ``tier`` 1, 2 or 3."""
        if tier is not None and tier not in (1, 2, 3):
            raise ValueError("tier must be 1, 2 or 3, got %r" % (tier,))
        return self.emit("postcondition", plan=plan, step=step, tier=tier, ok=ok,
                         failure_mode=failure_mode, program=program, detail=detail, **extra)

    def satisfaction(self, intention, ok, answer=None, expected_answer=None, correct=None,
                     failure_mode=None, **extra):
        """``satisfaction``: whether the intention's satisfaction condition holds; a harness
        that scores the run adds the ``answer`` it extracted, the ``expected_answer``, its
        score ``correct`` and a ``failure_mode`` label (seed 004: ``bad_retrieval``,
        ``avoided_file_read``, ``incorrect_computation``, ``verification_false_positive``,
        ``dag_deadlock``, ``answer_formatting``)."""
        if correct is not None and not isinstance(correct, bool):
            raise ValueError("correct must be True or False")
        return self.emit("satisfaction", intention=intention, ok=ok, answer=answer,
                         expected_answer=expected_answer, correct=correct,
                         failure_mode=failure_mode, **extra)

    def review(self, decisions, **extra):
        """``review``: plan library decisions, dicts with ``plan``, ``action`` (``keep``,
        ``refine``, ``remove``) and ``note``."""
        for d in decisions:
            if not isinstance(d, dict):
                raise ValueError("every decision must be a dict")
            _check("action", d.get("action"), _ACTIONS)
            if "action" not in d:
                raise ValueError("every decision needs an 'action'")
        return self.emit("review", decisions=decisions, **extra)

    def plan_stats(self, plan, use_count=None, success_count=None, failure_count=None,
                   **extra):
        """``plan_stats``: usage counters of a library plan."""
        return self.emit("plan_stats", plan=plan, use_count=use_count,
                         success_count=success_count, failure_count=failure_count, **extra)

    def log(self, message, level="info", **extra):
        """``log``: a free-form message at ``level`` (``info``, ``warn``, ``error``, ...)."""
        return self.emit("log", level=level, message=message, **extra)

    def score(self, name, value=None, label=None, explanation=None, target=None, source=None,
              passed=None, **extra):
        """``score``: a score or evaluation (``value`` a number, a string or a bool), of the
        event whose id is ``target`` (none: the session), given by ``source``; ``passed``
        says whether the work passed when the scorer knows (``False``: the audit's
        ``score-failed``)."""
        if passed is not None and not isinstance(passed, bool):
            raise ValueError("passed must be a bool")
        if value is not None and (isinstance(value, (dict, list)) or
                                  not isinstance(value, (int, float, str, bool))):
            raise ValueError("value must be a number, a string or a bool")
        return self.emit("score", name=name, value=value, label=label,
                         explanation=explanation, target=target, source=source,
                         passed=passed, **extra)
