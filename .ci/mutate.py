"""`make mutate [MODULE=operations/outbox.py]`: mutation testing (mutmut 3) of the modules that carry Gambit's promises.

Each module of the scope below is run on its own, with only the tests that carry its promises: mutmut runs those once
to learn which test reaches which function, then runs each mutant against the tests that reach its function, stopping
at the first failure. A module's run ends with its score (killed/total) and every survivor named (file:line and the
mutation), printed and written to mutants/score-<module>.md; docs/mutation.md keeps the figures of a release.

mutmut keys its cache of results on the tests selected, so running another module starts its counts afresh: that is
why each module's score is written as soon as its run ends. Slow by nature (minutes per module), so not part of
`make test`: run it before a release. MUTATE_JOBS (default 1) mutants run at once; MUTATE_LEAVE_OUT (test files,
comma-separated) leaves tests out, for a figure from before they were written; MUTATE_MATCH (mutant globs) narrows
what --again re-runs; MUTATE_PYTEST_ARGS adds pytest options (a run on PostgreSQL: see run()).

Usage: .venv/bin/python .ci/mutate.py [--again] [MODULE ...]
  no MODULE: every one, in the order below (`--list` names them); `--again`: only the mutants that survived the
  module's last run (after tests were added), its other verdicts kept.
"""

from __future__ import annotations

import ast
import fnmatch
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Scope:
    # mutmut's mutant names, as globs: "operations.outbox.*", "bids.services.x_can_see__mutmut_*"
    mutants: tuple[str, ...]
    tests: tuple[str, ...]  # the test files (or node ids) that carry the module's promises
    # mutmut's time limit of a mutant is (the tests' duration + this) x 15 seconds, where the duration counts only the
    # tests' calls, not their fixtures: a module whose tests set up something slow (a demo seeded once for the module)
    # needs room for it, or every mutant its slow test runs "times out" (counted killed) while the fixture is set up.
    timeout_constant: float = 1.0


def _fn(module: str, *names: str) -> tuple[str, ...]:
    return tuple(f"{module}.x_{name}__mutmut_*" for name in names)


SCOPE: dict[str, Scope] = {
    "operations/outbox.py": Scope(("operations.outbox.*", "operations.delivery.*"), (
        "tests/core/test_outbox.py", "tests/core/test_outbox_promises.py", "tests/core/test_readyz.py",
        "tests/core/test_health_details.py", "tests/accounts/test_confirm_by_secretariat.py",
        "tests/board/test_decision_notices.py", "tests/core/test_outbox_conversation.py",
        "tests/core/test_outbox_writing.py")),
    # test_backup.py seeds the demo once for its module (30 s and more on the shared machine, uncounted by mutmut).
    "operations/backup.py": Scope(("operations.backup.*",), (
        "tests/core/test_backup_promises.py", "tests/core/test_backup.py"), timeout_constant=6.0),
    "operations/page_cache.py": Scope(("operations.page_cache.*",), (
        "tests/core/test_page_cache.py", "tests/core/test_page_cache_key.py",
        "tests/core/test_page_cache_store.py")),
    "evidence/audit.py": Scope(("evidence.audit.*",), (
        "tests/core/test_audit.py", "tests/core/test_backup_promises.py", "tests/core/test_audit_migration.py",
        "tests/core/test_evidence_models.py", "tests/contracts/test_evidence_bound.py",
        "tests/contracts/test_evidence_forms.py", "tests/core/test_audit_promises.py",
        "tests/contracts/test_audit_findings.py")),
    "evidence/rows.py": Scope(("evidence.rows.*",), (
        "tests/core/test_evidence_models.py", "tests/contracts/test_evidence_bound.py",
        "tests/contracts/test_evidence_forms.py")),
    # Who sees what: bids.services.can_see and every *_visible / may_* rule (and the stake they ask about).
    "access": Scope(
        _fn("bids.services", "can_see", "bids_visible_to", "_opened_by_roles", "has_stake", "_staked_events",
            "kept_from_rivals")
        + _fn("bids.views", "may_edit")
        + _fn("scoring.visibility", "may_see_scores_on_bid", "declaration_gate",
              "reads_the_decision_record")
        + _fn("contracts.queries", "may_view") + _fn("contracts.lifecycle", "may_view_contract")
        + _fn("api.bids", "_visible_bid") + _fn("api.contracts", "_visible_contract"), (
            "tests/bids/test_can_see_stake.py", "tests/accounts/test_role_conflicts.py",
            "tests/scoring/test_visibility_rules.py", "tests/contracts/test_contracts_pages.py",
            "tests/bids/test_bid_pages.py", "tests/api/test_bids_api.py", "tests/board/test_score_visibility.py",
            "tests/bids/test_visibility_one_rule.py", "tests/security/test_sessions_and_gate.py",
            "tests/scoring/test_independence_scoring.py")),
    "contracts/rules": Scope(("contracts.rules.*",), (
        "tests/contracts/test_contracts_rules.py", "tests/contracts/test_boundaries.py",
        "tests/contracts/test_results_and_deductions.py", "tests/contracts/test_sane_dates.py",
        "tests/contracts/test_milestone_aggregates.py", "tests/contracts/test_countersign_trust.py",
        "tests/contracts/test_contracts_reminders.py", "tests/contracts/test_terms_golden.py",
        "tests/contracts/test_countersign_rule.py", "tests/contracts/test_rules_in_words.py",
        "tests/contracts/test_contracts_state_groups.py")),
    # The payment and deduction rules (contracts/services.py's until 0.36.0, where this key was its path): payments.py,
    # the deductions of results.py, and the sanity check of a day in guards.py.
    "contracts/payments": Scope(
        _fn("contracts.guards", "check_day")
        + _fn("contracts.payments", "_check_in_force", "_check_key", "_received_on_problem", "payment_problems",
              "record_payment", "reverse_payment")
        + _fn("contracts.results", "prize_balance_milestone", "record_deduction", "return_deduction"), (
        "tests/contracts/test_boundaries.py", "tests/contracts/test_contracts_services.py",
        "tests/contracts/test_results_and_deductions.py", "tests/contracts/test_sane_dates.py",
        "tests/contracts/test_payment_rules.py")),
    # What issue 37 keeps per process or on a row instead of computing it on every view (a report, a fragment, a
    # scorecard's scores, the ranking's slot): a key that misses one value shows a page that is no longer true.
    "kept": Scope(
        ("bids.judged.*",) + _fn("core.templating", "kept_fragment", "forget_fragments")
        + _fn("bids.presenters", "cost_inputs")
        + _fn("scoring.queries", "build_ranking", "_figures_of", "_arithmetic", "_call_key", "_arithmetic_key")
        + tuple(f"scoring.queries.xǁKeptScoresǁ{m}__mutmut_*" for m in ("key", "get", "put", "clear"))
        + ("scoring.queries.xǁScoringDataǁload_scores__mutmut_*",), (
            "tests/bids/test_judged_report.py", "tests/bids/test_view_fragments.py",
            "tests/scoring/test_ranking_cache_scoring.py", "tests/scoring/test_page_costs.py",
            "tests/bids/test_bid_queries.py", "tests/scoring/test_views_scoring.py",
            "tests/board/test_score_visibility.py", "tests/scoring/test_independence_scoring.py",
            "tests/scoring/test_services_scoring.py")),
}

KILLED = {"killed", "timeout"}


def _fresh_pdf_pool() -> None:
    """In each mutant's process: a new evidence.pdf render pool. mutmut forks every mutant from the process that ran the
    tests once (the stats); the pool's threads started there do not exist in the fork, so a render submitted to the old
    pool never runs and waits out PDF_TIMEOUT_SECONDS ("the PDF took longer than 30 s to render"): every test that
    renders a PDF after the first render (the demo seeded by tests/core/test_backup.py) failed for that reason alone,
    and counted its mutant killed."""
    import concurrent.futures

    pdf = sys.modules.get("evidence.pdf")
    if pdf is not None:
        pdf._pool = concurrent.futures.ThreadPoolExecutor(max_workers=2, thread_name_prefix="pdf")


def _function_line(source: str, key: str) -> int:
    """The line of the def of the function a mutant key names ("operations.outbox.x_deliver__mutmut_3",
    "operations.outbox.xǁ_Dispatcherǁrun__mutmut_1")."""
    name = key.rsplit(".", 1)[1].split("__mutmut_")[0]
    cls, func = (name[1:].split("ǁ")[1:3] if name.startswith("xǁ") else (None, name.removeprefix("x_")))
    for node in ast.walk(ast.parse(source)):
        if cls is not None and isinstance(node, ast.ClassDef) and node.name == cls:
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and item.name == func:
                    return item.lineno
        if cls is None and isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == func \
                and node.col_offset == 0:
            return node.lineno
    return 1


def _where_and_what(key: str, path: Path) -> tuple[int, str]:
    """(line, "old → new") of one mutant, from mutmut's diff of its function."""
    from mutmut.mutation.diff_apply import get_diff_for_mutant

    source = path.read_text()
    start = _function_line(source, key)
    diff = get_diff_for_mutant(key, path=path).splitlines()
    old = [line[1:].strip() for line in diff if line.startswith("-") and not line.startswith("---")]
    new = [line[1:].strip() for line in diff if line.startswith("+") and not line.startswith("+++")]
    line = start
    if old:
        for number, text in enumerate(source.splitlines()[start - 1:], start):
            if text.strip() == old[0]:
                line = number
                break
    what = f"`{' '.join(old)}` → `{' '.join(new)}`"
    return line, re.sub(r"\s+", " ", what)


def _statuses(scope: Scope) -> dict[str, tuple[str, str]]:
    """{mutant key: (status, file)} of the scope's mutants, as mutmut recorded them."""
    from mutmut.mutation.data import SourceFileMutationData
    from mutmut.stats import status_by_exit_code
    from mutmut.utils.file_utils import walk_mutatable_files

    out = {}
    for path in walk_mutatable_files():
        data = SourceFileMutationData(path=path)
        data.load()
        for key, code in data.exit_code_by_key.items():
            if any(fnmatch.fnmatchcase(key, pattern) for pattern in scope.mutants):
                out[key] = (status_by_exit_code[code], str(path))
    return out


def report(name: str, tests: list[str], statuses: dict[str, tuple[str, str]]) -> str:
    counts: dict[str, int] = {}
    survivors: list[tuple[str, int, str, str]] = []
    for key, (status, path) in sorted(statuses.items()):
        counts[status] = counts.get(status, 0) + 1
        if status not in KILLED:
            line, what = _where_and_what(key, Path(path))
            survivors.append((path, line, what, f"{status} ({key})"))
    total = sum(counts.values())
    killed = sum(n for status, n in counts.items() if status in KILLED)
    score = f"{killed}/{total} ({100 * killed / total:.1f}%)" if total else "0/0"
    lines = [f"## {name}: {score} killed", "", "tests: " + ", ".join(tests), "",
             "by status: " + ", ".join(f"{status} {n}" for status, n in sorted(counts.items())), ""]
    lines += [f"- {path}:{line} {what} — {status}" for path, line, what, status in
              sorted(survivors, key=lambda s: (s[0], s[1]))]
    return "\n".join(lines) + "\n"


def run(name: str, scope: Scope, jobs: int, *, again: bool = False) -> str:
    """Run the module's mutants (`again`: only those that survived its last run, the other verdicts kept: adding
    tests kills mutants, it never brings one back) and write its score."""
    import json

    from mutmut.__main__ import cli
    from mutmut.configuration import config

    kept = Path("mutants") / f"score-{name.replace('/', '-')}.json"
    before: dict[str, tuple[str, str]] = {}
    mutants = list(scope.mutants)
    if again:
        if not kept.exists():
            raise SystemExit(f"{name}: no earlier run to take the survivors of ({kept}); run it whole first")
        before = {k: tuple(v) for k, v in json.loads(kept.read_text()).items()}  # type: ignore[misc]
        # "not checked" (a run stopped early) stays so; MUTATE_MATCH (globs) narrows the re-run to some functions.
        match = [g.strip() for g in os.environ.get("MUTATE_MATCH", "*").split(",") if g.strip()]
        mutants = sorted(k for k, (status, _) in before.items() if status not in KILLED | {"not checked"}
                         and any(fnmatch.fnmatchcase(k, g) for g in match))
        if not mutants:
            print(f"{name}: no survivor to run again", flush=True)

    # MUTATE_LEAVE_OUT (test files, comma-separated) measures the figure from before those tests were written.
    left_out = {t.strip() for t in os.environ.get("MUTATE_LEAVE_OUT", "").split(",") if t.strip()}
    present = [t for t in scope.tests if Path(t.split("::")[0]).exists() and t not in left_out]
    if len(present) < len(scope.tests):  # a checkout from before those tests were written (a "before" figure)
        print(f"{name}: not present, left out: {', '.join(sorted(set(scope.tests) - set(present)))}", flush=True)
    config().pytest_add_cli_args_test_selection = present
    # MUTATE_PYTEST_ARGS: more pytest options for every test run of the module (a run on PostgreSQL needs
    # "-p no:unraisableexception": mutmut's forced-fail pass makes every function raise at once, and a connection
    # dropped mid-way is then reported at exit as an unraisable warning, which the suite's filterwarnings = error turns
    # into an error that stops mutmut before the first mutant).
    config().pytest_add_cli_args = [*config().pytest_add_cli_args, *os.environ.get("MUTATE_PYTEST_ARGS", "").split()]
    config().timeout_constant = scope.timeout_constant
    if mutants:
        try:
            cli.main(["run", "--max-children", str(jobs), *mutants], standalone_mode=False)
        except SystemExit as exc:
            if exc.code:
                raise
    now = _statuses(scope)
    statuses = {**before, **{k: now[k] for k in mutants if k in now}} if again else now
    kept.write_text(json.dumps(statuses, indent=0, sort_keys=True))
    text = report(name, present, statuses)
    kept.with_suffix(".md").write_text(text)
    print(text, flush=True)
    return text


def main(argv: list[str]) -> int:
    if "--list" in argv:
        print("\n".join(SCOPE))
        return 0
    again = "--again" in argv
    names = [a for a in argv if a != "--again"] or list(SCOPE)
    unknown = [n for n in names if n not in SCOPE]
    if unknown:
        print(f"not in the mutation scope: {', '.join(unknown)}; choose among: {', '.join(SCOPE)}", file=sys.stderr)
        return 2
    jobs = int(os.environ.get("MUTATE_JOBS", "1"))
    os.register_at_fork(after_in_child=_fresh_pdf_pool)
    texts = [run(name, SCOPE[name], jobs, again=again) for name in names]
    if len(texts) > 1:
        print("\n".join(t.splitlines()[0] for t in texts))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
