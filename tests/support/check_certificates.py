"""Checks doxascope's certificates without doxascope (tests/certificates_dratify.rs).

Proofs are checked by dratify, a DRAT checker that shares no code with varisat or
doxascope; models by evaluating every clause of the DIMACS file here, with a parser of its
own.

  check_certificates.py DIR          every entry of DIR/index.json; prints a JSON summary
  check_certificates.py --proof CNF PROOF
  check_certificates.py --model CNF MODEL
                                     one pair; prints "accepted" or "rejected: why"
"""

import json
import sys
from pathlib import Path

import dratify


def clauses(text):
    out, cur = [], []
    for line in text.splitlines():
        line = line.strip()
        if not line or line[0] in "cp":
            continue
        for word in line.split():
            lit = int(word)
            if lit == 0:
                out.append(cur)
                cur = []
            else:
                cur.append(lit)
    if cur:
        raise ValueError("a clause is not ended by 0")
    return out


def model_literals(text):
    lits = []
    for line in text.splitlines():
        if line.startswith("v "):
            lits.extend(int(w) for w in line.split()[1:])
    if not lits or lits[-1] != 0:
        raise ValueError("no model line ending in 0")
    return set(lits[:-1])


def check_proof(cnf_text, proof_text):
    result = dratify.check_proof(dratify.parse_dimacs(cnf_text), proof_text, engine="python")
    if result.ok and result.reached_empty:
        return None
    return str(result)


def check_model(cnf_text, model_text):
    true = model_literals(model_text)
    if any(-lit in true for lit in true):
        return "the model sets a variable both ways"
    for i, clause in enumerate(clauses(cnf_text)):
        if not any(lit in true for lit in clause):
            return "clause %d (%s) is false in the model" % (i + 1, " ".join(map(str, clause)))
    return None


def main():
    args = sys.argv[1:]
    if args and args[0] in ("--proof", "--model"):
        cnf, other = Path(args[1]).read_text(), Path(args[2]).read_text()
        why = check_proof(cnf, other) if args[0] == "--proof" else check_model(cnf, other)
        print("accepted" if why is None else "rejected: " + why)
        return
    root = Path(args[0])
    summary = {"entries": 0, "proofs": {"accepted": [], "rejected": []},
               "models": {"accepted": [], "rejected": []}}
    for entry in json.loads((root / "index.json").read_text()):
        summary["entries"] += 1
        if "cnf" not in entry:
            continue
        cnf = (root / entry["cnf"]).read_text()
        if "proof" in entry:
            why = check_proof(cnf, (root / entry["proof"]).read_text())
            kind, name = "proofs", entry["proof"]
        else:
            why = check_model(cnf, (root / entry["model"]).read_text())
            kind, name = "models", entry["model"]
        if why is None:
            summary[kind]["accepted"].append(name)
        else:
            summary[kind]["rejected"].append([name, why])
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
