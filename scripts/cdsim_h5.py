"""cdsim_h5: read a cdsim output file (DESIGN.md section 3) for the helper scripts.

The scripts in this directory (compare-models, sweep, render) import it from their own
directory. It turns the recorded state into the quantities people compare the contact models
on: the height of each body's lowest point, its horizontal speed, when and where it stops, and
the kinematics of each recorded contact (is it loaded, is it sliding, its friction coefficient,
its post-step normal and tangential velocities).

Conventions: SI units, z up, the ground is the plane z = ground height with normal +z;
quaternions are (w, x, y, z), body to world. Arrays are numpy arrays with the shapes given
in each docstring (F frames, B bodies, C contact rows over all frames).

Errors a user can cause (a missing file, a file that is not a cdsim output) raise CdsimError
with a one-line message; the scripts print it and exit, without a traceback.
"""

import json
import math
import os
import shutil

try:
    import numpy as np
    import h5py
except ImportError as exc:  # the scripts say what to install instead of a traceback
    np = None
    h5py = None
    _IMPORT_ERROR = str(exc)
else:
    _IMPORT_ERROR = None

# the fields of `cdsim --summary` (and of the /summary group attributes), in contract order
SUMMARY_FIELDS = [
    "scene", "model", "solver", "out", "status", "exit", "steps", "substeps", "wall_time",
    "contacts_mean", "contacts_max", "iterations_mean", "iterations_max", "residual_max",
    "nonconverged_steps", "penetration_max", "lift_max", "kinetic_energy_final",
]

# friction of the built-in material (src/scene.c cd_materialDefault): used by bodies, the
# ground or materials that do not give one
DEFAULT_FRICTION = 0.5

# a body whose horizontal speed stays below this (m/s) has stopped; a contact whose tangential
# speed exceeds it is sliding
STOP_SPEED = 1e-3


class CdsimError(Exception):
    """A problem the user can fix (bad file, missing program); the message is one line."""


def require_numpy():
    """Raises CdsimError when numpy or h5py cannot be imported (wrong interpreter)."""
    if _IMPORT_ERROR is not None:
        raise CdsimError("needs numpy and h5py (Debian: python3-numpy python3-h5py; run the "
                         "scripts with /usr/bin/python3): " + _IMPORT_ERROR)


def find_cdsim(script_dir):
    """The cdsim program: $CDSIM_BIN, else ../build/cdsim next to the scripts, else `cdsim`
    on PATH. Returns an absolute path or raises CdsimError."""
    env = os.environ.get("CDSIM_BIN")
    if env:
        if os.path.isfile(env) and os.access(env, os.X_OK):
            return os.path.abspath(env)
        raise CdsimError("CDSIM_BIN=%s is not an executable file" % env)
    local = os.path.join(script_dir, os.pardir, "build", "cdsim")
    if os.path.isfile(local) and os.access(local, os.X_OK):
        return os.path.abspath(local)
    on_path = shutil.which("cdsim")
    if on_path:
        return os.path.abspath(on_path)
    raise CdsimError("cannot find cdsim: set CDSIM_BIN, run `make` (build/cdsim) or put "
                     "cdsim on PATH")


def parse_summary(text):
    """The summary dict from cdsim's stdout (the last line that is a JSON object), or None."""
    for line in reversed(text.splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                value = json.loads(line)
            except ValueError:
                return None
            return value if isinstance(value, dict) else None
    return None


def quat_to_matrix(q):
    """Rotation matrices (..., 3, 3) from unit quaternions q (..., 4) = (w, x, y, z), body to
    world: world = R @ body. The quaternions are normalised first."""
    require_numpy()
    q = np.asarray(q, dtype=float)
    q = q / np.linalg.norm(q, axis=-1, keepdims=True)
    w, x, y, z = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    r = np.empty(q.shape[:-1] + (3, 3))
    r[..., 0, 0] = 1 - 2 * (y * y + z * z)
    r[..., 0, 1] = 2 * (x * y - w * z)
    r[..., 0, 2] = 2 * (x * z + w * y)
    r[..., 1, 0] = 2 * (x * y + w * z)
    r[..., 1, 1] = 1 - 2 * (x * x + z * z)
    r[..., 1, 2] = 2 * (y * z - w * x)
    r[..., 2, 0] = 2 * (x * z - w * y)
    r[..., 2, 1] = 2 * (y * z + w * x)
    r[..., 2, 2] = 1 - 2 * (x * x + y * y)
    return r


def _attr_text(value):
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if hasattr(value, "item") and not isinstance(value, str):
        value = value.item()
        if isinstance(value, bytes):
            return value.decode("utf-8", "replace")
    return value


def _strings(dataset):
    return [_attr_text(s) if isinstance(s, bytes) else str(s) for s in dataset[()]]


def body_geometry(scene_body, shape):
    """(radius, half extents (3,)) of one body from its scene entry: a sphere has its
    "radius" and half extents (r, r, r); a cube its edge "size" / 2 on each axis; a box its
    "size" [a, b, c] / 2. Raises CdsimError when the scene does not give the size."""
    name = scene_body.get("name", "?")
    if shape == "sphere":
        if "radius" not in scene_body:
            raise CdsimError("scene body %s: sphere without radius" % name)
        r = float(scene_body["radius"])
        return r, (r, r, r)
    if "size" not in scene_body:
        raise CdsimError("scene body %s: %s without size" % (name, shape))
    size = scene_body["size"]
    if isinstance(size, (int, float)):
        half = (0.5 * size,) * 3
    elif isinstance(size, list) and len(size) == 3:
        half = tuple(0.5 * float(s) for s in size)
    else:
        raise CdsimError("scene body %s: size must be a number or [a, b, c]" % name)
    return 0.5 * math.sqrt(sum((2 * h) ** 2 for h in half)), half


def material_friction(scene, material_name):
    """Friction coefficient of a named material of the scene (None: the built-in default)."""
    if material_name is None:
        return DEFAULT_FRICTION
    mats = scene.get("materials") or {}
    mat = mats.get(material_name) or {}
    return float(mat.get("friction", DEFAULT_FRICTION))


def contact_friction(scene, material_a, material_b):
    """mu at a contact of two materials (names, None = built-in default), by cdsim's mixing
    rule (src/scene.h cd_materialMix), which goes by value: sqrt(mu_a mu_b), exactly mu for
    two materials of the same friction."""
    mu_a = material_friction(scene, material_a)
    mu_b = material_friction(scene, material_b)
    return mu_a if mu_a == mu_b else math.sqrt(mu_a * mu_b)


class Run:
    """One cdsim output file, read whole into memory (the files the scripts handle are small).

    Attributes:
      path, attrs (root attributes, dict), scene (the effective scene, dict or {} when absent),
      model, solver, dt, status (str / float),
      time (F,), names, shapes (B lists of str), mass (B,), fixed (B,) bool,
      position (F,B,3), orientation (F,B,4), velocity (F,B,3), angular_velocity (F,B,3),
      radius (B,) bounding radius, half (B,3) half extents (spheres: r, r, r),
      ground_height (float or None when the scene has no ground),
      summary (dict from the /summary group attributes, or None),
      contacts: dict of arrays, empty arrays when the file holds no contacts:
        offset (F+1,), frame (C,) frame index of each row, bodies (C,2), point (C,3),
        normal (C,3), gap (C,), normal_impulse (C,), tangent_impulse (C,3),
        normal_velocity (C,) and tangent_velocity (C,3) (None when not recorded).
    """

    def __init__(self, path):
        require_numpy()
        if not os.path.exists(path):
            raise CdsimError("%s: no such file" % path)
        try:
            f = h5py.File(path, "r")
        except OSError as exc:
            raise CdsimError("%s: not an HDF5 file (%s)" % (path, exc))
        with f:
            try:
                self._read(f)
            except KeyError as exc:
                raise CdsimError("%s: not a cdsim output file (missing %s)" % (path, exc))
        self.path = path

    def _read(self, f):
        self.attrs = {k: _attr_text(v) for k, v in f.attrs.items()}
        scene_text = self.attrs.get("scene")
        try:
            self.scene = json.loads(scene_text) if scene_text else {}
        except ValueError:
            self.scene = {}
        self.model = str(self.attrs.get("model", "?"))
        self.solver = str(self.attrs.get("solver", "?"))
        self.dt = float(self.attrs["dt"]) if "dt" in self.attrs else float(self.scene.get("dt", "nan"))
        self.status = str(self.attrs.get("status", "?"))
        self.time = np.asarray(f["time"][()], dtype=float)
        self.names = _strings(f["bodies/name"])
        self.shapes = _strings(f["bodies/shape"])
        self.mass = np.asarray(f["bodies/mass"][()], dtype=float)
        self.fixed = np.asarray(f["bodies/fixed"][()]).astype(bool)
        nframe, nbody = len(self.time), len(self.names)
        traj = f["trajectory"]
        self.position = np.asarray(traj["position"][()], dtype=float).reshape(nframe, nbody, 3)
        self.orientation = np.asarray(traj["orientation"][()], dtype=float).reshape(nframe, nbody, 4)
        self.velocity = np.asarray(traj["velocity"][()], dtype=float).reshape(nframe, nbody, 3)
        self.angular_velocity = np.asarray(traj["angular_velocity"][()], dtype=float).reshape(nframe, nbody, 3)

        scene_bodies = self.scene.get("bodies") or []
        self.radius = np.zeros(nbody)
        self.half = np.zeros((nbody, 3))
        self.body_material = []
        for i in range(nbody):
            entry = scene_bodies[i] if i < len(scene_bodies) else {}
            if not entry:
                raise CdsimError("the file's scene attribute does not describe body %d (%s)"
                                 % (i, self.names[i]))
            self.radius[i], self.half[i] = body_geometry(entry, self.shapes[i])
            self.body_material.append(entry.get("material"))
        ground = self.scene.get("ground")
        self.ground_height = float(ground.get("height", 0.0)) if isinstance(ground, dict) else None
        self.ground_material = ground.get("material") if isinstance(ground, dict) else None

        self.summary = None
        if "summary" in f:
            self.summary = {k: _attr_text(v) for k, v in f["summary"].attrs.items()}

        c = {}
        if "contacts" in f and "offset" in f["contacts"]:
            g = f["contacts"]
            c["offset"] = np.asarray(g["offset"][()], dtype=np.int64)
            for name, width in (("bodies", 2), ("point", 3), ("normal", 3), ("gap", 0),
                                ("normal_impulse", 0), ("tangent_impulse", 3),
                                ("normal_velocity", 0), ("tangent_velocity", 3)):
                if name in g:
                    a = np.asarray(g[name][()])
                    c[name] = a.reshape(-1, width) if width else a.reshape(-1)
                else:
                    c[name] = None
        else:
            c["offset"] = np.zeros(nframe + 1, dtype=np.int64)
        ncon = int(c["offset"][-1]) if len(c["offset"]) else 0
        counts = np.diff(c["offset"])[:nframe] if len(c["offset"]) > 1 else np.zeros(0, dtype=np.int64)
        c["frame"] = np.repeat(np.arange(len(counts)), np.maximum(counts, 0))[:ncon]
        for name, width in (("bodies", 2), ("point", 3), ("normal", 3), ("gap", 0),
                            ("normal_impulse", 0), ("tangent_impulse", 3)):
            if c.get(name) is None:
                c[name] = np.zeros((0, width) if width else 0)
        self.contacts = c

    @property
    def nframe(self):
        return len(self.time)

    @property
    def nbody(self):
        return len(self.names)

    def moving_bodies(self):
        """Indices of the bodies that are not fixed."""
        return [i for i in range(self.nbody) if not self.fixed[i]]

    def body_index(self, name):
        """Index of the body called name (or given as an index); CdsimError when absent."""
        if name in self.names:
            return self.names.index(name)
        try:
            i = int(name)
        except ValueError:
            i = -1
        if 0 <= i < self.nbody:
            return i
        raise CdsimError("%s: no body %s (bodies: %s)" % (self.path, name, ", ".join(self.names)))

    def lowest_point(self):
        """Height (F,B) of each body's lowest point: z - r for a sphere, and for a box
        z - sum_i |R[2,i]| h_i, the support of the box in the -z direction (R body to world,
        h the half extents)."""
        r = quat_to_matrix(self.orientation)              # (F,B,3,3)
        depth = np.einsum("fbi,bi->fb", np.abs(r[:, :, 2, :]), self.half)
        is_sphere = np.array([s == "sphere" for s in self.shapes])
        depth = np.where(is_sphere[None, :], self.radius[None, :], depth)
        return self.position[:, :, 2] - depth

    def horizontal_speed(self):
        """Speed (F,B) of each body's centre of mass in the ground plane (x, y)."""
        return np.hypot(self.velocity[:, :, 0], self.velocity[:, :, 1])

    def stop(self, body, threshold=STOP_SPEED):
        """(stop time, horizontal distance) of one body: the first frame from which its
        horizontal speed stays below threshold to the end of the run, and the horizontal
        distance between its position there and at frame 0. (None, None) when it is still
        moving at the last frame."""
        speed = self.horizontal_speed()[:, body]
        moving = np.nonzero(speed >= threshold)[0]
        if len(moving) and moving[-1] == len(speed) - 1:
            return None, None
        k = int(moving[-1]) + 1 if len(moving) else 0
        d = self.position[k, body, :2] - self.position[0, body, :2]
        return float(self.time[k]), float(np.hypot(d[0], d[1]))

    def contact_friction(self):
        """mu (C,) of every contact row, from the materials of its two bodies (-1 = ground)."""
        b = self.contacts["bodies"]
        if len(b) == 0:
            return np.zeros(0)
        cache = {}
        mu = np.empty(len(b))
        for k in range(len(b)):
            pair = (int(b[k, 0]), int(b[k, 1]))
            if pair not in cache:
                mats = [self.ground_material if j < 0 else self.body_material[j] for j in pair]
                cache[pair] = contact_friction(self.scene, mats[0], mats[1])
            mu[k] = cache[pair]
        return mu

    def sliding_contacts(self, threshold=STOP_SPEED):
        """The loaded sliding contacts: those that carried a normal impulse (> 0) in their step
        and whose post-step tangential speed exceeds threshold. Returns a dict of arrays, one
        entry a row: frame, time, bodies (n,2), mu, tangent_speed |v_t|, normal_velocity v_n
        (separating > 0), gap. Empty arrays when the file lacks normal_velocity /
        tangent_velocity."""
        c = self.contacts
        if c.get("normal_velocity") is None or c.get("tangent_velocity") is None:
            empty = np.zeros(0)
            return {"frame": empty.astype(int), "time": empty, "bodies": np.zeros((0, 2), int),
                    "mu": empty,
                    "tangent_speed": empty, "normal_velocity": empty, "gap": empty}
        vt = np.linalg.norm(c["tangent_velocity"], axis=1)
        keep = (c["normal_impulse"] > 0) & (vt > threshold)
        frame = c["frame"][keep]
        return {"frame": frame, "time": self.time[frame], "bodies": c["bodies"][keep],
                "mu": self.contact_friction()[keep],
                "tangent_speed": vt[keep], "normal_velocity": c["normal_velocity"][keep],
                "gap": c["gap"][keep]}
