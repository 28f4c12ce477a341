/* scene.h: the immutable description of a run (DESIGN §2), after loading and validation.
 *
 * A cdScene is filled by io/scene_json.c (or by a test), completed by cd_sceneFinish
 * (derived data: masses, inertias, material indices), and is const from then on.
 * Everything is SI, z up, world frame unless a field says otherwise.
 */
#ifndef CD_SCENE_H
#define CD_SCENE_H

#include <stdint.h>

typedef enum { CD_SPHERE = 0, CD_BOX = 1 } cdShape;

/* material parameters: the seed 002 parameters (snake_case in the scene file) */
typedef struct cdMaterial {
  char name[64];
  double friction;                /* mu (Coulomb); also the penalty model's mu_d */
  double restitution;             /* e_res in (0, 1]: penalty impact models 1 and 2 */
  double stiffness;               /* k_c, N/m^n_exp */
  double damping;                 /* d_c, N s/m (linear damping, every impact model) */
  double stiffness_exponent;      /* n_exp > 0 */
  int impact_model;               /* 0 linear / Edinburgh, 1 Hunt-Crossley, 2 Gonthier/Carvalho-Martins */
  double min_impact_velocity;     /* delta_dot_{-,min} >= 0, m/s */
  double friction_regularization; /* v_reg > 0, m/s */
  double pull_off_force;          /* f_adh >= 0, N */
  double plasticity_ratio;        /* lambda_P in [0, 1) */
  double adhesion_coefficient;    /* k_adh >= 0 */
  double adhesion_exponent;       /* n_adh > 0 */
} cdMaterial;

/* the built-in material used by bodies without one (documented in README.md) */
cdMaterial cd_materialDefault(void);

/* the parameters that act at a contact of materials a and b (the mixing rule, README.md):
 * by value, never by name, and a material mixed with one of identical values gives exactly
 * its values. friction sqrt(mu_a mu_b), restitution the smaller, stiffness and damping the
 * harmonic mean 2 k_a k_b / (k_a + k_b) (each body a half-spring of 2 k in series), impact
 * model the higher number, every other parameter the mean. */
void cd_materialMix(const cdMaterial *a, const cdMaterial *b, cdMaterial *out);

typedef struct cdBodyDef {
  char name[64];
  cdShape shape;
  double radius;         /* sphere radius, m (CD_SPHERE) */
  double half[3];        /* box half extents along body axes, m (CD_BOX) */
  int hollow;            /* sphere: other spheres touch its inside (seed 002 hollow sphere) */
  int fixed;             /* never moves; mass and inertia are infinite */
  double mass;           /* kg; derived from density by cd_sceneFinish when 0; 0 if fixed */
  double density;        /* kg/m^3 as the scene gave it, or 0 when it gave mass */
  double inertia[3];     /* principal moments in body axes, kg m^2 (derived) */
  double position[3];    /* centre of mass, world, m */
  double orientation[4]; /* unit quaternion (w, x, y, z), body to world */
  double velocity[3];    /* linear velocity at the centre of mass, world, m/s */
  double angular_velocity[3]; /* world frame, rad/s */
  int material;          /* index into cdScene.material */
} cdBodyDef;

typedef struct cdScene {
  char model[16];     /* "lcp", "ccp" or "penalty": the scene's default model */
  double gravity[3];  /* m/s^2 */
  double dt;          /* s */
  long nstep;         /* steps to run (from duration or steps) */
  int contact_margin_given; /* 0: "auto", the velocity-adaptive margin (collide.c); 1: the next */
  double contact_margin;    /* m >= 0: only contacts with gap at most this enter a step */
  int has_ground;     /* a plane z = ground_height with normal +z */
  double ground_height;
  int ground_material;
  int nmaterial;
  cdMaterial *material; /* (nmaterial); index 0 is the built-in default */
  int nbody;
  cdBodyDef *body;      /* (nbody) */
} cdScene;

/* the steps of a run of `duration` s at dt (> 0): duration / dt rounded to the nearest whole
 * number when within 1e-9 relative of it (1.5 / 0.01 = 150.00000000000003 -> 150), else
 * rounded up (the run covers at least the duration). A double, so that the caller can
 * check it against its limit before converting. The one rule for the scene's "duration" and
 * --duration. */
double cd_sceneStepCount(double duration, double dt);

/* derives mass (from density when mass is 0) and the principal inertia of every body;
 * checks nothing: the loader has validated */
void cd_sceneFinish(cdScene *scene);
void cd_sceneFree(cdScene *scene);

/* the mixed material of a contact between bodies a and b (-1 is the ground) */
void cd_sceneContactMaterial(const cdScene *scene, int a, int b, cdMaterial *out);

/* 1 when two bodies (or a body and the ground) that can touch have materials of different
 * stiffness exponents, with those materials' indices in *ma, *mb; else 0. A moving body
 * can touch anything; two fixed bodies never touch. */
int cd_sceneExponentConflict(const cdScene *scene, int *ma, int *mb);

/* bounding radius of a body (sphere radius or box half diagonal) */
double cd_bodyBoundingRadius(const cdBodyDef *b);

#endif
