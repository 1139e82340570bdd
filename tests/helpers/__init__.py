"""What the tests share: the servers they start and the helpers several modules use.

Servers (the tier classifier in the repository's conftest.py knows them by name):

- ``hub``: a real JupyterHub subprocess with its proxy (``hub_process``, ``Hub``);
- ``demo_hub``: a ``DemoHub`` for a fixture, checked to leave nothing running (``serve``,
  ``restartable``);
- ``cluster``: real KubeSpawner against the simulated cluster (``running_cluster``);
- ``postgres``: a throwaway PostgreSQL server (``postgres_server``, ``PostgresServer``).

The other modules are named by what they hold (``pages``: the templates rendered as
JupyterHub renders them; ``history_store``: the store's fixtures and spawns; ...); each
says so in its first line.

Their ``assert`` statements are rewritten by pytest, as a test module's are (``tests/__init__.py``
asks for it before any of them is imported).
"""
