#!/usr/bin/python3
"""make_fake_h5.py OUT.h5: writes a small file with the layout of a cdsim output
(DESIGN.md section 3) whose contents are known in closed form, for tests/test_scripts.c.

Five frames, k = 0..4, t_k = 0.01 k, dt = 0.01, four bodies:
  0 "ball"   sphere r 0.1 at (x_k, 0, 0.5), identity orientation, material "steel";
             velocity (max(0, 2 - k), 0, -5), x_k = 0.01 min(k, 2): it stops at frame 2
  1 "cube"   cube edge 0.2 at (0, 1, 1), rotated by theta_k = k pi/16 about x, no material
  2 "slab"   box [0.2, 0.4, 0.6] at (0, 2, 2), rotated by phi_k = k pi/10 about y, no material
  3 "anchor" fixed sphere r 1 at (0, 0, -1), material "steel"
Ground at height 0, material "rubber". Materials: steel friction 0.3, rubber 0.8; the built-in
default (no material) has friction 0.5.
Contacts (bodies a, b; normal impulse; tangent velocity; normal velocity):
  frame 1: (-1, 0) 0.1 (0.5, 0, 0) 0.2      loaded, sliding
           ( 3, 0) 0.0 (0.5, 0, 0) 0.0      not loaded
  frame 2: (-1, 1) 0.2 (0, 0.0005, 0) 0.0   loaded, not sliding (|v_t| < 1e-3)
  frame 3: (-1, 2) 0.3 (0.3, 0.4, 0) 0.1    loaded, sliding
"""
import json
import math
import sys

import h5py
import numpy as np


def main():
    if len(sys.argv) != 2:
        print("usage: make_fake_h5.py OUT.h5", file=sys.stderr)
        return 2
    nframe, dt = 5, 0.01
    scene = {
        "dt": dt, "steps": nframe - 1, "gravity": [0, 0, -9.81],
        "ground": {"height": 0.0, "material": "rubber"},
        "materials": {"steel": {"friction": 0.3}, "rubber": {"friction": 0.8}},
        "bodies": [
            {"name": "ball", "shape": "sphere", "radius": 0.1, "mass": 1.0,
             "position": [0, 0, 0.5], "material": "steel"},
            {"name": "cube", "shape": "cube", "size": 0.2, "mass": 1.0, "position": [0, 1, 1]},
            {"name": "slab", "shape": "box", "size": [0.2, 0.4, 0.6], "mass": 1.0,
             "position": [0, 2, 2]},
            {"name": "anchor", "shape": "sphere", "radius": 1.0, "fixed": True,
             "position": [0, 0, -1], "material": "steel"},
        ],
    }
    nbody = len(scene["bodies"])
    pos = np.zeros((nframe, nbody, 3))
    quat = np.zeros((nframe, nbody, 4))
    vel = np.zeros((nframe, nbody, 3))
    for k in range(nframe):
        pos[k, 0] = (0.01 * min(k, 2), 0, 0.5)
        pos[k, 1] = (0, 1, 1)
        pos[k, 2] = (0, 2, 2)
        pos[k, 3] = (0, 0, -1)
        theta, phi = k * math.pi / 16, k * math.pi / 10
        quat[k, 0] = (1, 0, 0, 0)
        quat[k, 1] = (math.cos(theta / 2), math.sin(theta / 2), 0, 0)
        quat[k, 2] = (math.cos(phi / 2), 0, math.sin(phi / 2), 0)
        quat[k, 3] = (1, 0, 0, 0)
        vel[k, 0] = (max(0.0, 2.0 - k), 0, -5)
    rows = [  # frame, a, b, normal impulse, tangent velocity, normal velocity
        (1, -1, 0, 0.1, (0.5, 0, 0), 0.2),
        (1, 3, 0, 0.0, (0.5, 0, 0), 0.0),
        (2, -1, 1, 0.2, (0, 0.0005, 0), 0.0),
        (3, -1, 2, 0.3, (0.3, 0.4, 0), 0.1),
    ]
    offset = np.zeros(nframe + 1, dtype=np.int64)
    for r in rows:
        offset[r[0] + 1:] += 1
    ncon = len(rows)
    str_t = h5py.string_dtype()
    with h5py.File(sys.argv[1], "w") as f:
        f.attrs["format"] = "cdsim"
        f.attrs["format_version"] = 1
        f.attrs["model"] = "ccp"
        f.attrs["solver"] = "fake"
        f.attrs["dt"] = dt
        f.attrs["scene"] = json.dumps(scene)
        f.attrs["status"] = "ok"
        f["time"] = dt * np.arange(nframe)
        f["bodies/name"] = np.array([b["name"] for b in scene["bodies"]], dtype=object).astype(str_t)
        f.create_dataset("bodies/shape", data=[b["shape"] for b in scene["bodies"]], dtype=str_t)
        f["bodies/mass"] = np.array([0.0 if b.get("fixed") else b["mass"] for b in scene["bodies"]])
        f["bodies/fixed"] = np.array([1 if b.get("fixed") else 0 for b in scene["bodies"]], dtype=np.uint8)
        f["trajectory/position"] = pos
        f["trajectory/orientation"] = quat
        f["trajectory/velocity"] = vel
        f["trajectory/angular_velocity"] = np.zeros((nframe, nbody, 3))
        f["contacts/offset"] = offset
        f["contacts/bodies"] = np.array([(r[1], r[2]) for r in rows], dtype=np.int32)
        f["contacts/point"] = np.zeros((ncon, 3))
        f["contacts/normal"] = np.tile([0.0, 0.0, 1.0], (ncon, 1))
        f["contacts/gap"] = np.zeros(ncon)
        f["contacts/normal_impulse"] = np.array([r[3] for r in rows])
        f["contacts/tangent_impulse"] = np.zeros((ncon, 3))
        f["contacts/tangent_velocity"] = np.array([r[4] for r in rows], dtype=float)
        f["contacts/normal_velocity"] = np.array([r[5] for r in rows])
        f["solver/iterations"] = np.zeros(nframe, dtype=np.int32)
        f["solver/residual"] = np.zeros(nframe)
        f["solver/converged"] = np.ones(nframe, dtype=np.uint8)
        f["energy/kinetic"] = np.zeros(nframe)
        f["energy/potential"] = np.zeros(nframe)
    return 0


if __name__ == "__main__":
    sys.exit(main())
