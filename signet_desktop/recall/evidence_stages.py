"""The evidence stages: time, preference and neighbours as `memory.pipelineV2.evidence` asks,
then claims."""

from __future__ import annotations

from signet_desktop.config.pipeline import EvidenceStagesConfig
from signet_desktop.recall.claim_evidence import STAGE_NAME as CLAIMS
from signet_desktop.recall.claim_evidence import ClaimEvidence
from signet_desktop.recall.neighbour_evidence import NeighbourEvidence
from signet_desktop.recall.preference_evidence import PreferenceEvidence
from signet_desktop.recall.time_evidence import TimeEvidence

EvidenceStage = TimeEvidence | PreferenceEvidence | NeighbourEvidence | ClaimEvidence
ALWAYS_ON = (CLAIMS,)  # stages no configuration switches off (benches count them as default)


def evidence_stages(config: EvidenceStagesConfig) -> tuple[EvidenceStage, ...]:
    """The `time` stage, then `preference`, then `neighbours` (after the stages that move
    scores, so it lends the final ones), each when switched on; then `claims`, always (it reads
    nothing but the named entities' keyed claims, and changes nothing without them)."""
    stages: list[EvidenceStage] = []
    if config.time:
        stages.append(TimeEvidence())
    if config.preference:
        stages.append(PreferenceEvidence())
    if config.neighbours:
        stages.append(NeighbourEvidence())
    stages.append(ClaimEvidence())
    return tuple(stages)
