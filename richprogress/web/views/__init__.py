"""The views: timelines and stored spawns turned into the plain data the templates render
and the endpoints serve. ``rows`` and ``payloads`` are used by ``failure``, which
``history`` uses; ``pending`` stands alone. No HTML is built here.
"""
