"""Typical start times: statistics of past spawns, the cache that keeps them ready for pages
(and the admin's settings for it), and the words that say them.
"""
