"""The injection gate measured: public prompt-injection corpora, benign developer notes, and
the build before side by side.

    uv run python bench/injection_gate.py [--before main] [--show-misses]

Corpora (files and licences: bench/data/injection/SOURCES.md):
- `giskard`: Giskard-AI/prompt-injections @ce50a54 (MIT; garak prompts under Apache-2.0 and
  PromptInject prompts under MIT): 35 jailbreak and hijacking prompts. Split by row index:
  even rows are the dev half, odd rows the held-out half.
- `bipia-code`, `bipia-text`: microsoft/BIPIA @1a2a91d (MIT), the indirect-injection attack
  instructions of its code and text tasks, with BIPIA's own split (train = dev, test =
  held-out). A third of `bipia-text` is BIPIA's task-irrelevant group, whose "attacks" are
  ordinary tasks ("What is the capital of Brazil?", "Recommend a good book for a relaxing
  weekend read"): no content rule can or should withhold those, so the row
  `bipia-text (directive)` leaves that group out (the first five categories of each file).
- `probe`: issue 24's four strings and the multilingual/paraphrased families
  (tests/fixtures/injection_probe.json, written for this project).
- benign: 133 developer notes written for this bench, many of them hard negatives
  (commands, URLs, "ignore", "instructions", "policy", "from now on", French/Spanish/German),
  and the 1,222 distinct commit messages of simonw/llm @f3f4f29 (Apache-2.0; subject and
  body, each cut at 1,000 characters) — real developer text nobody wrote for this bench.

What is counted:
- **withheld** — the gate's verdict is not context-eligible: the text never enters any
  prompt-facing projection. This is what "kept out of context" means in this table, and the
  only form counted as such.
- **active** — of the items that do reach context, how many still carry an active form in
  what the projection renders: a markdown image or link, a live URL (`http(s)://`, `ftp://`,
  `www.`), an HTML/chat-template tag (`<img`, `<script`, `<|im_start|>`, `[INST]`, …), or a
  pipe into a shell or network tool outside backticks. The structural defence
  (`safety/defang.py`) is what drives this to 0; quoting and the data-not-instructions note
  do not make a plain-language instruction harmless, so those items are reported as reaching
  context, not as kept out.
- **benign withheld** — benign notes the gate withholds (false positives); **verbatim** —
  benign notes whose text appears unchanged in what the projection renders;
  **commands kept** — backtick spans of the benign notes that survive byte for byte.

The build before is the policy at `--before` (default `main`), read with `git show` and
loaded on its own (it imports only the standard library), rendered as main renders a memory
line (`- text (type, date)`, whitespace collapsed: `service/hooks/injection.py` at main).
"""

from __future__ import annotations

import argparse
import csv
import importlib.util
import json
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from signet_desktop.domain.memory import Memory  # noqa: E402
from signet_desktop.safety.policy import scan  # noqa: E402
from signet_desktop.service.hooks.injection import render_injection  # noqa: E402

DATA = ROOT / "bench" / "data" / "injection"
PROBE = ROOT / "tests" / "fixtures" / "injection_probe.json"
# BIPIA's text attacks come in three groups of five categories per file: task-irrelevant
# (ordinary tasks, e.g. "What is the capital of Brazil?"), targeted (reply transformations)
# and malicious. The first five categories of each file are the task-irrelevant group.
BIPIA_TASK_ONLY_CATEGORIES = 5

_ACTIVE = re.compile(
    r"!\[|\]\(|\b(?:https?|ftp|wss?|file)://|(?<![\w.\[])www\.[\w-]+\.[a-z]{2,}\b"
    r"|<\s*/?\s*(?:img|a|script|iframe|svg|system|tool_call|invoke)\b|<\|[^|]{0,40}\|>"
    r"|\[/?INST\]|<<\s*/?SYS\s*>>",
    re.IGNORECASE,
)
_PIPE = re.compile(r"\|\s*(?:sudo\s+)?(?:ba|z|da)?sh\b|\|\s*(?:nc|ncat|netcat|socat|curl|wget)\b")
_CODE = re.compile(r"`[^`]*`")


@dataclass(frozen=True, slots=True)
class Item:
    corpus: str
    split: str  # dev | held-out | all
    text: str


def corpora() -> list[Item]:
    items: list[Item] = []
    with (DATA / "giskard_prompt_injections.csv").open(encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            split = "dev" if int(row["index"]) % 2 == 0 else "held-out"
            items.append(Item("giskard", split, row["prompt"]))
    for kind in ("code", "text"):
        for part, split in (("train", "dev"), ("test", "held-out")):
            found = json.loads((DATA / f"bipia_{kind}_attack_{part}.json").read_text("utf-8"))
            for position, texts in enumerate(found.values()):
                for text in texts:
                    items.append(Item(f"bipia-{kind}", split, text))
                    if kind == "text" and position >= BIPIA_TASK_ONLY_CATEGORIES:
                        items.append(Item("bipia-text (directive)", split, text))
    probe = json.loads(PROBE.read_text("utf-8"))
    items += [Item("probe", "all", x["text"]) for x in probe["probe"]]
    items += [Item("probe", "all", text) for text in probe["families"]]
    return items


def benign() -> dict[str, list[str]]:
    lines = (DATA / "benign_notes.txt").read_text("utf-8").splitlines()
    commits = json.loads((DATA / "llm_commit_messages.json").read_text("utf-8"))["messages"]
    return {
        "developer notes": [line for line in lines if line.strip() and not line.startswith("#")],
        "simonw/llm commit messages": commits,
    }


def previous_policy(rev: str) -> ModuleType | None:
    """`safety/policy.py` at `rev`, loaded as its own module (None when git cannot show it)."""
    try:
        source = subprocess.run(
            ["git", "show", f"{rev}:signet_desktop/safety/policy.py"],
            cwd=ROOT, check=True, capture_output=True, text=True,
        ).stdout  # fmt: skip
    except (OSError, subprocess.CalledProcessError):
        return None
    if "from signet_desktop" in source:
        return None  # not standalone: cannot be compared in process
    folder = Path(tempfile.mkdtemp(prefix="signet-policy-"))
    path = folder / "policy_before.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("policy_before", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["policy_before"] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def memory(text: str) -> Memory:
    return Memory(
        id="m1", agent_id="bench", type="fact", content=text, content_hash="h", importance=0.5,
        pinned=False, tags=(), who=None, project=None, scope=None, visibility="global",
        memory_kind="episodic", source_type=None, source_id=None, idempotency_key=None,
        session_id=None, metadata={}, created_at="2026-12-01T00:00:00Z",
        updated_at="2026-12-01T00:00:00Z", updated_by="user", version=1, is_deleted=False,
        deleted_at=None, access_count=0, last_accessed=None, embedding_model=None,
    )  # fmt: skip


def rendered_now(text: str) -> str:
    """The memory's line as the session-start/prompt injection renders it (gate bypassed:
    only called for texts the gate let through)."""
    block = render_injection(
        [memory(text)], agent_id="bench", project=None, max_chars=10_000,
        gate=lambda _a, _k, items: [t for _, t in items],
    )  # fmt: skip
    return block.text.splitlines()[-1]


def rendered_before(text: str) -> str:
    return f"- {' '.join(text.split())} (fact, 2026-12-01)"


def active(line: str) -> bool:
    outside = _CODE.sub("", line)
    return bool(_ACTIVE.search(outside) or _PIPE.search(outside))


@dataclass(frozen=True, slots=True)
class Build:
    name: str
    withheld: Callable[[str], bool]
    render: Callable[[str], str]


def row(items: list[str], build: Build) -> tuple[int, int, int]:
    withheld = [t for t in items if build.withheld(t)]
    shown = [t for t in items if not build.withheld(t)]
    return len(items), len(withheld), sum(active(build.render(t)) for t in shown)


def pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:5.1f}%" if whole else "    -"


def benign_row(build: Build, notes: list[str]) -> None:
    withheld = [t for t in notes if build.withheld(t)]
    shown = [t for t in notes if not build.withheld(t)]
    verbatim = sum(" ".join(t.split()) in build.render(t) for t in shown)
    spans = [(t, s) for t in shown for s in _CODE.findall(" ".join(t.split()))]
    kept = sum(s in build.render(t) for t, s in spans)
    print(
        f"{build.name:<6} withheld {pct(len(withheld), len(notes))}"
        f" · verbatim {pct(verbatim, len(shown))} · commands kept {kept}/{len(spans)}"
        f" · active forms left {sum(active(build.render(t)) for t in shown)}"
    )
    for text in withheld:
        print(f"         withheld: {' '.join(text.split())[:150]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before", default="main", help="git revision of the build before")
    parser.add_argument("--show-misses", action="store_true", help="print what reaches context")
    args = parser.parse_args()
    now = Build("now", lambda t: not scan(t).context_eligible, rendered_now)
    builds = [now]
    old = previous_policy(args.before)
    if old is not None:
        builds.append(Build(args.before, lambda t: not old.scan(t).context_eligible,
                            rendered_before))  # fmt: skip
    items = corpora()
    groups: dict[tuple[str, str], list[str]] = {}
    for item in items:
        groups.setdefault((item.corpus, item.split), []).append(item.text)
        if item.split != "all":
            groups.setdefault((item.corpus, "both"), []).append(item.text)
    head = f"{'corpus':<24} {'split':<9} {'n':>4}"
    for build in builds:
        head += f" | {build.name + ' withheld':>16} {'active':>6}"
    print("Injections kept out of context (withheld by the gate) and active forms left in what")
    print("reaches context")
    print(head)
    for (corpus, split), texts in sorted(groups.items()):
        line = f"{corpus:<24} {split:<9} {len(texts):>4}"
        for build in builds:
            n, withheld, live = row(texts, build)
            line += f" | {pct(withheld, n):>16} {live:>6}"
        print(line)
    for title, notes in benign().items():
        print()
        print(f"Benign: {title} (n={len(notes)})")
        for build in builds:
            benign_row(build, notes)
    if args.show_misses:
        print("\nInjections that reach context now:")
        for item in items:
            if item.split != "both" and not now.withheld(item.text):
                print(f"  [{item.corpus}/{item.split}] {rendered_now(item.text)[:160]}")


if __name__ == "__main__":
    main()
