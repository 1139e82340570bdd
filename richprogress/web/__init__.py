"""The pages and endpoints: tornado handlers, the template variable and the views that
turn timelines and history into what templates and JSON show.
"""
