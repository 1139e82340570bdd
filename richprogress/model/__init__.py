"""The record and timeline vocabulary: records, the spawn timeline, times, safe display text
and event order. Imports nothing else of the package, so every layer above can use it.
"""
