"""A blind baseline: can the texts alone, without any model, tell members from non-members?

The SoK on membership inference against foundation models (Das et al., "Blind baselines beat
membership inference attacks for foundation models") shows that many published member /
non-member splits differ in their words or dates, so a classifier on the texts alone beats the
attacks. Here: bag of words (unigrams and bigrams) with a logistic regression, scored out of fold
(stratified k-fold, seeded) so no text is scored by a classifier that saw it. When its AUROC
reaches BLIND_SHIFT_AUROC, the split is shifted and every attack's AUROC on it is suspect.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

BLIND_SHIFT_AUROC = 0.6  # a model-free classifier this good means the split, not the model, separates
BLIND_FOLDS = 5


def bag_of_words_scores(texts: Sequence[str], labels, seed: int = 0, folds: int = BLIND_FOLDS) -> np.ndarray:
    """Out-of-fold P(member | words of the text) per text (higher = member); NaN for all texts
    when a class has fewer texts than 2 (nothing to learn from)."""
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold, cross_val_predict
    from sklearn.pipeline import make_pipeline

    labels = np.asarray(labels).astype(bool)
    smaller = min(int(labels.sum()), int((~labels).sum()))
    if smaller < 2:
        return np.full(len(labels), np.nan)
    pipeline = make_pipeline(CountVectorizer(ngram_range=(1, 2), lowercase=True),
                             LogisticRegression(max_iter=1000))
    splitter = StratifiedKFold(n_splits=min(folds, smaller), shuffle=True, random_state=seed)
    return cross_val_predict(pipeline, list(texts), labels, cv=splitter, method="predict_proba")[:, 1]
