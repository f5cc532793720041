"""The time and preference stages as `memory.pipelineV2.evidence` asks for them."""

from __future__ import annotations

from signet_desktop.config.pipeline import EvidenceStagesConfig
from signet_desktop.recall.preference_evidence import PreferenceEvidence
from signet_desktop.recall.time_evidence import TimeEvidence


def evidence_stages(config: EvidenceStagesConfig) -> tuple[TimeEvidence | PreferenceEvidence, ...]:
    """The `time` stage, then the `preference` stage, each when switched on."""
    stages: list[TimeEvidence | PreferenceEvidence] = []
    if config.time:
        stages.append(TimeEvidence())
    if config.preference:
        stages.append(PreferenceEvidence())
    return tuple(stages)
