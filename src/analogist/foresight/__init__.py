"""Foresight with historical analogies (seed 001, CANA): events decomposed into structural
positions, the self-analogy filter, position-level alignment by SME, cross-analogy confirmation
(Theorem 5), the reflective loop (Algorithm 1) and the Structural Analogy Brief."""
