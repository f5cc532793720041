"""The knowledge graph: entities, the ontology control plane, expansion and linking."""
