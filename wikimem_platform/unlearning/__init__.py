"""Closing the erasure loop: forget/retain sets in the formats unlearning tools read (`export`)."""
