"""Reference data every audit ranks against, built from the extract (or the bundled sample).

- `properties`: the property table (which person properties are worth probing);
- `cohorts`: web presence and the well-known / lesser-known cohorts of subjects;
- `counterfactuals`: counterfactual (human, value) pairs and each subject's candidate set;
- `bundled`: where the shipped Wikidata sample and sidecars live.
"""
